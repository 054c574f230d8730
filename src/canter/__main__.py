"""`python -m canter ...` is `canter ...` (torchrun starts the ranks of `canter bench` this way)."""

from canter.cli.main import entrypoint

if __name__ == "__main__":
    entrypoint()
