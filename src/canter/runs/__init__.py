"""Run handling, below both `canter.cli` and `canter.bench`: train arguments -> env + runner
(`args`), run directories and `command.json` (`rundir`), the run-directory lock (`lock`), one-line
tyro errors (`parsing`) and starting local ranks with torchrun's launcher (`launch`)."""
