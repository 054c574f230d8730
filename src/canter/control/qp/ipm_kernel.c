/* Fused CPU kernel of `qp.solve` with the interior-point method: validation, scaling, the
 * Mehrotra iterations of canter/control/qp/ipm.py, unscaling, residuals, certificates and status.
 *
 * The same algorithm as the torch path, formula for formula, but compiled: problems are taken in
 * groups of LANES, stored lane-interleaved (value i of the group's problems at v[i*LANES + k]), so
 * every loop below runs over the LANES problems of a group with one SIMD instruction; groups are
 * spread over OpenMP threads. Entries of A that are zero in every problem of a group are skipped
 * (per-row column lists), which makes a sparse A (e.g. the GRF friction rows) cheap.
 *
 * `real` is a macro: the file is compiled once with -Dreal=double and once with -Dreal=float
 * (canter/control/qp/kernel.py).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#ifndef LANES
#define LANES 16
#endif
#define LOOP _Pragma("omp simd") for (int k = 0; k < LANES; k++)
#define V(a, i) ((a) + (size_t)(i) * LANES)
/* plain selects (fmax/fmin would be library calls, one per lane) */
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static const real TINY = (real)1e-30;
static const real MAX_RATIO = (real)1e14;
static const real STEP_TO_BOUNDARY = (real)0.99;
static const real WARM_MULTIPLIER = (real)1e-2;

typedef struct {
  int n, m;
  real *P, *q, *A, *d, *mask, *count;              /* group data */
  int *rowptr, *cols;                               /* nonzero columns of each row */
  real *x, *w, *z, *best_merit, *best_x, *best_z, *dxs; /* state */
  real *rd, *rp, *mu, *merit, *M, *invdiag, *frozen; /* work */
  real *rhs, *t, *dx, *dw, *dz, *Ax, *alpha, *sigma, *rc, *invw, *invz, *dd;
} Group;

/* out (n) = Aᵀ (v[:m] − v[m:])  (v has 2m entries), or Aᵀ v when two_sided == 0; A in lanes with
 * the group's nonzero pattern */
static void at_mul_A(const Group *g, const real *A, const real *v, real *out, int two_sided) {
  const int n = g->n, m = g->m;
  for (int j = 0; j < n; j++) LOOP V(out, j)[k] = 0;
  for (int i = 0; i < m; i++) {
    real vi[LANES];
    LOOP vi[k] = two_sided ? V(v, i)[k] - V(v, m + i)[k] : V(v, i)[k];
    for (int p = g->rowptr[i]; p < g->rowptr[i + 1]; p++) {
      const int j = g->cols[p];
      const real *a = V(A, i * n + j);
      real *o = V(out, j);
      LOOP o[k] += a[k] * vi[k];
    }
  }
}

/* out (m) = A v */
static void a_mul_A(const Group *g, const real *A, const real *v, real *out) {
  const int n = g->n, m = g->m;
  for (int i = 0; i < m; i++) {
    real acc[LANES] = {0};
    for (int p = g->rowptr[i]; p < g->rowptr[i + 1]; p++) {
      const int j = g->cols[p];
      const real *a = V(A, i * n + j), *vj = V(v, j);
      LOOP acc[k] += a[k] * vj[k];
    }
    LOOP V(out, i)[k] = acc[k];
  }
}

static void at_mul(const Group *g, const real *v, real *out, int two_sided) { at_mul_A(g, g->A, v, out, two_sided); }
static void a_mul(const Group *g, const real *v, real *out) { a_mul_A(g, g->A, v, out); }

/* r_d, r_p, μ and merit of the state (x, w, z) */
static void residuals(Group *g) {
  const int n = g->n, m = g->m;
  at_mul(g, g->z, g->rd, 1);
  for (int j = 0; j < n; j++) {
    real *r = V(g->rd, j);
    LOOP r[k] += V(g->q, j)[k];
    for (int l = 0; l < n; l++) {
      const real *p = V(g->P, j * n + l), *xl = V(g->x, l);
      LOOP r[k] += p[k] * xl[k];
    }
  }
  a_mul(g, g->x, g->Ax);
  real merit[LANES] = {0}, wz[LANES] = {0};
  for (int j = 0; j < n; j++) LOOP merit[k] = MAX(merit[k], fabs(V(g->rd, j)[k]));
  for (int i = 0; i < 2 * m; i++) {
    const real *ax = V(g->Ax, i < m ? i : i - m);
    const real sgn = i < m ? 1 : -1;
    real *rp = V(g->rp, i);
    const real *w = V(g->w, i), *z = V(g->z, i), *d = V(g->d, i), *mk = V(g->mask, i);
    LOOP {
      rp[k] = (sgn * ax[k] + w[k] - d[k]) * mk[k];
      merit[k] = MAX(merit[k], fabs(rp[k]));
      wz[k] += w[k] * z[k];
    }
  }
  LOOP {
    g->mu[k] = wz[k] / g->count[k];
    g->merit[k] = MAX(merit[k], g->mu[k]);
  }
}

/* in-place lower Cholesky factor of the n × n lane matrix M, the reciprocals of its diagonal in
 * invdiag; fail[k] = 1 where a pivot is not positive (or NaN) */
static void lane_cholesky(real *M, real *invdiag, int n, real *fail) {
  LOOP fail[k] = 0;
  for (int j = 0; j < n; j++) {
    real *Mjj = V(M, j * n + j), *inv = V(invdiag, j);
    for (int p = 0; p < j; p++) {
      const real *Ljp = V(M, j * n + p);
      LOOP Mjj[k] -= Ljp[k] * Ljp[k];
    }
    LOOP {
      const int bad = !(Mjj[k] > 0);
      fail[k] = bad ? 1 : fail[k];
      Mjj[k] = sqrt(bad ? (real)1 : Mjj[k]);
      inv[k] = 1 / Mjj[k];
    }
    for (int i = j + 1; i < n; i++) {
      real *Mij = V(M, i * n + j);
      for (int p = 0; p < j; p++) {
        const real *Lip = V(M, i * n + p), *Ljp = V(M, j * n + p);
        LOOP Mij[k] -= Lip[k] * Ljp[k];
      }
      LOOP Mij[k] *= inv[k];
    }
  }
}

/* M = P + δI + Aᵀ diag(dd) A, then its Cholesky factor in place (lower triangle, with the
 * reciprocals of the diagonal in invdiag); a lane whose pivot is not positive (or NaN) fails */
static void factor(Group *g, real reg, real *fail) {
  const int n = g->n, m = g->m;
  for (int j = 0; j < n; j++)
    for (int l = 0; l <= j; l++) {
      const real *p = V(g->P, j * n + l);
      real *o = V(g->M, j * n + l);
      const real r = j == l ? reg : 0;
      LOOP o[k] = p[k] + r;
    }
  for (int i = 0; i < m; i++) {
    const real *di = V(g->dd, i);
    for (int pa = g->rowptr[i]; pa < g->rowptr[i + 1]; pa++) {
      const int a = g->cols[pa];
      const real *Aa = V(g->A, i * n + a);
      real s[LANES];
      LOOP s[k] = Aa[k] * di[k];
      for (int pb = g->rowptr[i]; pb <= pa; pb++) {
        const int b = g->cols[pb];
        const real *Ab = V(g->A, i * n + b);
        real *o = a >= b ? V(g->M, a * n + b) : V(g->M, b * n + a);
        LOOP o[k] += s[k] * Ab[k];
      }
    }
  }
  lane_cholesky(g->M, g->invdiag, n, fail);
}

/* x = M⁻¹ b with the lane factor (L, invdiag) (b and x may alias) */
static void lane_chol_solve(const real *L, const real *invdiag, int n, const real *b, real *x) {
  for (int j = 0; j < n; j++) {
    real acc[LANES];
    LOOP acc[k] = V(b, j)[k];
    for (int p = 0; p < j; p++) {
      const real *Ljp = V(L, j * n + p), *xp = V(x, p);
      LOOP acc[k] -= Ljp[k] * xp[k];
    }
    LOOP V(x, j)[k] = acc[k] * V(invdiag, j)[k];
  }
  for (int j = n - 1; j >= 0; j--) {
    real acc[LANES];
    LOOP acc[k] = V(x, j)[k];
    for (int p = j + 1; p < n; p++) {
      const real *Lpj = V(L, p * n + j), *xp = V(x, p);
      LOOP acc[k] -= Lpj[k] * xp[k];
    }
    LOOP V(x, j)[k] = acc[k] * V(invdiag, j)[k];
  }
}

/* the Newton direction (dx, dw, dz) for the complementarity target rc (2m), and in g->alpha the
 * largest step α ≤ 1 keeping w + α dw ≥ 0 and z + α dz ≥ 0: 1 / max(1, max −dv/v) (v ≥ TINY
 * where masked in; masked-out rows have dv = 0) */
static void direction(Group *g, const real *rc) {
  const int n = g->n, m = g->m;
  real worst[LANES];
  LOOP worst[k] = 1;
  for (int i = 0; i < 2 * m; i++) {
    const real *z = V(g->z, i), *rp = V(g->rp, i), *r = V(rc, i), *iw = V(g->invw, i), *mk = V(g->mask, i);
    real *t = V(g->t, i);
    LOOP t[k] = (z[k] * rp[k] - r[k]) * iw[k] * mk[k];
  }
  at_mul(g, g->t, g->rhs, 1);
  for (int j = 0; j < n; j++) LOOP V(g->rhs, j)[k] = -V(g->rd, j)[k] - V(g->rhs, j)[k];
  lane_chol_solve(g->M, g->invdiag, g->n, g->rhs, g->dx);
  for (int j = 0; j < n; j++) LOOP V(g->dx, j)[k] = g->frozen[k] != 0 ? 0 : V(g->dx, j)[k];
  a_mul(g, g->dx, g->Ax);
  for (int i = 0; i < 2 * m; i++) {
    const real *ax = V(g->Ax, i < m ? i : i - m);
    const real sgn = i < m ? 1 : -1;
    const real *z = V(g->z, i), *rp = V(g->rp, i), *r = V(rc, i), *iw = V(g->invw, i), *mk = V(g->mask, i);
    real *dw = V(g->dw, i), *dz = V(g->dz, i);
    const real *iz = V(g->invz, i);
    LOOP {
      dw[k] = (-rp[k] - sgn * ax[k]) * mk[k];
      dz[k] = (-r[k] - z[k] * dw[k]) * iw[k] * mk[k];
      const real aw = dw[k] < 0 ? -dw[k] * iw[k] : 0;
      const real az = dz[k] < 0 ? -dz[k] * iz[k] : 0;
      worst[k] = MAX(worst[k], MAX(aw, az));
    }
  }
  LOOP g->alpha[k] = 1 / worst[k];
}

static void iterate(Group *g, real reg, real tol) {
  const int n = g->n, m = g->m, m2 = 2 * m;
  residuals(g);
  LOOP {
    const int better = g->merit[k] < g->best_merit[k];
    g->best_merit[k] = better ? g->merit[k] : g->best_merit[k];
    g->t[k] = better;
  }
  for (int j = 0; j < n; j++) LOOP V(g->best_x, j)[k] = g->t[k] != 0 ? V(g->x, j)[k] : V(g->best_x, j)[k];
  for (int i = 0; i < m2; i++) LOOP V(g->best_z, i)[k] = g->t[k] != 0 ? V(g->z, i)[k] : V(g->best_z, i)[k];
  for (int i = 0; i < m2; i++) {
    const real *w = V(g->w, i), *z = V(g->z, i);
    real *iw = V(g->invw, i), *iz = V(g->invz, i);
    LOOP {
      iw[k] = 1 / w[k];
      iz[k] = 1 / z[k];
    }
  }
  for (int i = 0; i < m; i++) {
    const real *z0 = V(g->z, i), *w0 = V(g->invw, i), *k0 = V(g->mask, i);
    const real *z1 = V(g->z, m + i), *w1 = V(g->invw, m + i), *k1 = V(g->mask, m + i);
    LOOP V(g->dd, i)[k] = MIN(z0[k] * w0[k], MAX_RATIO) * k0[k] + MIN(z1[k] * w1[k], MAX_RATIO) * k1[k];
  }
  factor(g, reg, g->frozen);
  LOOP g->frozen[k] = (g->frozen[k] != 0 || g->merit[k] <= tol) ? 1 : 0;
  /* predictor: r_c = w∘z */
  for (int i = 0; i < m2; i++) LOOP V(g->rc, i)[k] = V(g->w, i)[k] * V(g->z, i)[k];
  direction(g, g->rc);
  real acc[LANES] = {0};
  for (int i = 0; i < m2; i++) {
    const real *w = V(g->w, i), *dw = V(g->dw, i), *z = V(g->z, i), *dz = V(g->dz, i);
    LOOP acc[k] += (w[k] + g->alpha[k] * dw[k]) * (z[k] + g->alpha[k] * dz[k]);
  }
  LOOP {
    const real mu_aff = acc[k] / g->count[k];
    const real ratio = MIN(MAX(mu_aff / MAX(g->mu[k], TINY), (real)0), (real)1);
    g->sigma[k] = ratio * ratio * ratio;
  }
  /* corrector: r_c = w∘z + Δw_aff∘Δz_aff − σμ */
  for (int i = 0; i < m2; i++) {
    real *rc = V(g->rc, i);
    const real *dw = V(g->dw, i), *dz = V(g->dz, i), *mk = V(g->mask, i);
    LOOP rc[k] = rc[k] + dw[k] * dz[k] - g->sigma[k] * g->mu[k] * mk[k];
  }
  direction(g, g->rc);
  LOOP g->alpha[k] = g->frozen[k] != 0 ? 0 : STEP_TO_BOUNDARY * g->alpha[k];
  for (int j = 0; j < n; j++) {
    real *x = V(g->x, j), *dx = V(g->dx, j), *s = V(g->dxs, j);
    LOOP {
      s[k] = g->alpha[k] * dx[k];
      x[k] = x[k] + s[k];
    }
  }
  for (int i = 0; i < m2; i++) {
    real *w = V(g->w, i), *z = V(g->z, i);
    const real *dw = V(g->dw, i), *dz = V(g->dz, i), *mk = V(g->mask, i);
    LOOP {
      w[k] = mk[k] > 0 ? MAX(w[k] + g->alpha[k] * dw[k], TINY) : 1;
      z[k] = MAX(z[k] + g->alpha[k] * dz[k], TINY) * mk[k];
    }
  }
}

/* ---- the whole solve of a group: validate, sanitize, scale, iterate, unscale, classify ---- */

#define EPS ((real)(sizeof(real) == 8 ? 2.220446049250313e-16 : 1.1920928955078125e-07))
#define SQRT_TINY ((real)(sizeof(real) == 8 ? 1.4916681462400413e-154 : 1.0842021724855044e-19))

/* gather rows [b0, b0 + LANES) of a (B, len) array into lanes (a short group repeats its last
 * problem); stride 0 broadcasts one row to every lane */
static void gather(real *dst, const real *src, int64_t b0, int64_t batch, int len, int64_t stride) {
  for (int k = 0; k < LANES; k++) {
    const int64_t b = b0 + k < batch ? b0 + k : batch - 1;
    const real *s = src + b * stride;
    for (int i = 0; i < len; i++) dst[(size_t)i * LANES + k] = s[i];
  }
}

static void scatter(real *dst, const real *src, int64_t b0, int64_t batch, int len) {
  for (int k = 0; k < LANES && b0 + k < batch; k++) {
    real *d = dst + (b0 + k) * len;
    for (int i = 0; i < len; i++) d[i] = src[(size_t)i * LANES + k];
  }
}

static real inv_norm(real v) { return 1 / (v < (real)1e-4 ? (real)1 : MIN(v, (real)1e4)); }

static int all_finite(const real *v, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

/* per-group arrays beyond the iteration's (lanes each) */
typedef struct {
  real *Pr, *qr, *Ar, *lr, *ur;   /* the problems as given (A: finite entries of a shared A) */
  real *bad, *D, *E, *cost;       /* invalid flag; scaling x = D x̄, y = E ȳ / cost */
  real *xs, *ys, *dxs, *dys;      /* results in the problems' units */
  real *cm, *ra, *v, *c;          /* work: column norms (n), row norms (m), n- and m-vectors */
  real *status, *prim, *dual;
} Extra;

/* invalid problems (as `problem.invalid_problems`): non-finite data, NaN bounds, l > u,
 * l = +inf, u = −inf, asymmetric P, P not PSD (Cholesky of its symmetric part + 1e3 eps max|P|
 * + sqrt(tiny) fails) */
static void validate(Group *g, Extra *e, int a_shared, int shared_finite) {
  const int n = g->n, m = g->m;
  real bad[LANES], scale[LANES], asym[LANES];
  LOOP {
    bad[k] = shared_finite ? 0 : 1;
    scale[k] = 0;
    asym[k] = 0;
  }
  for (int i = 0; i < n * n; i++) {
    const real *p = V(e->Pr, i);
    LOOP {
      bad[k] = isfinite(p[k]) ? bad[k] : 1;
      scale[k] = MAX(scale[k], isfinite(p[k]) ? fabs(p[k]) : 0);
    }
  }
  for (int j = 0; j < n; j++) LOOP bad[k] = isfinite(V(e->qr, j)[k]) ? bad[k] : 1;
  if (!a_shared)
    for (int i = 0; i < m * n; i++) LOOP bad[k] = isfinite(V(e->Ar, i)[k]) ? bad[k] : 1;
  for (int i = 0; i < m; i++) {
    const real *lo = V(e->lr, i), *up = V(e->ur, i);
    LOOP {
      const int wrong = isnan(lo[k]) || isnan(up[k]) || lo[k] > up[k] || lo[k] == INFINITY || up[k] == -INFINITY;
      bad[k] = wrong ? 1 : bad[k];
    }
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      const real *pij = V(e->Pr, i * n + j), *pji = V(e->Pr, j * n + i);
      real *o = V(g->M, i * n + j);
      LOOP {
        const real a = isfinite(pij[k]) ? pij[k] : 0, b = isfinite(pji[k]) ? pji[k] : 0;
        asym[k] = MAX(asym[k], fabs(a - b));
        o[k] = (real)0.5 * (a + b) + (i == j ? (real)1e3 * EPS * scale[k] + SQRT_TINY : 0);
      }
    }
  real fail[LANES];
  lane_cholesky(g->M, g->invdiag, n, fail);
  LOOP e->bad[k] = (bad[k] != 0 || fail[k] != 0 || asym[k] > (real)1e3 * EPS * (1 + scale[k])) ? 1 : 0;
}

/* sanitized, Ruiz-equilibrated data of the iteration in g (as `problem.sanitize_and_scale`):
 * invalid problems become min ½‖x‖²; P symmetrized; `passes` passes scale [P Aᵀ; A 0] (only the
 * rows of a shared A, whose scaled copy As and factors E_shared are computed once) and the cost */
static void scale(Group *g, Extra *e, int a_shared, const real *As, const real *E_shared, int passes) {
  const int n = g->n, m = g->m;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      const real *pij = V(e->Pr, i * n + j), *pji = V(e->Pr, j * n + i);
      real *o = V(g->P, i * n + j);
      LOOP o[k] = e->bad[k] != 0 ? (real)(i == j) : (real)0.5 * (pij[k] + pji[k]);
    }
    LOOP {
      V(g->q, i)[k] = e->bad[k] != 0 ? 0 : V(e->qr, i)[k];
      V(e->D, i)[k] = 1;
    }
  }
  if (a_shared) {
    for (int i = 0; i < m * n; i++) LOOP V(g->A, i)[k] = As[i];
    for (int i = 0; i < m; i++) LOOP V(e->E, i)[k] = E_shared[i];
  } else {
    for (int i = 0; i < m * n; i++) LOOP V(g->A, i)[k] = e->bad[k] != 0 ? 0 : V(e->Ar, i)[k];
    for (int i = 0; i < m; i++) LOOP V(e->E, i)[k] = 1;
    for (int pass = 0; pass < passes; pass++) {
      for (int j = 0; j < n; j++) LOOP V(e->cm, j)[k] = 0;
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) LOOP V(e->cm, j)[k] = MAX(V(e->cm, j)[k], fabs(V(g->P, i * n + j)[k]));
      for (int i = 0; i < m; i++) {
        real r[LANES] = {0};
        for (int j = 0; j < n; j++) {
          const real *a = V(g->A, i * n + j);
          LOOP {
            r[k] = MAX(r[k], fabs(a[k]));
            V(e->cm, j)[k] = MAX(V(e->cm, j)[k], fabs(a[k]));
          }
        }
        LOOP V(e->ra, i)[k] = sqrt(inv_norm(r[k]));
      }
      for (int j = 0; j < n; j++) LOOP V(e->cm, j)[k] = sqrt(inv_norm(V(e->cm, j)[k]));
      for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) LOOP V(g->P, i * n + j)[k] *= V(e->cm, i)[k] * V(e->cm, j)[k];
        LOOP {
          V(g->q, i)[k] *= V(e->cm, i)[k];
          V(e->D, i)[k] *= V(e->cm, i)[k];
        }
      }
      for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) LOOP V(g->A, i * n + j)[k] *= V(e->ra, i)[k] * V(e->cm, j)[k];
        LOOP V(e->E, i)[k] *= V(e->ra, i)[k];
      }
    }
  }
  LOOP e->cost[k] = 1;
  if (passes > 0) {
    real mean[LANES] = {0}, qmax[LANES] = {0};
    for (int j = 0; j < n; j++) {
      real c[LANES] = {0};
      for (int i = 0; i < n; i++) LOOP c[k] = MAX(c[k], fabs(V(g->P, i * n + j)[k]));
      LOOP {
        mean[k] += c[k];
        qmax[k] = MAX(qmax[k], fabs(V(g->q, j)[k]));
      }
    }
    LOOP e->cost[k] = inv_norm(MAX(mean[k] / n, qmax[k]));
    for (int i = 0; i < n * n; i++) LOOP V(g->P, i)[k] *= e->cost[k];
    for (int j = 0; j < n; j++) LOOP V(g->q, j)[k] *= e->cost[k];
  }
}

/* residuals, infeasibility certificates and status in the problems' own units (as
 * `solve._finish`); the raw A (Ar) has the group's nonzero pattern; G is the factor of the
 * certificate projection's AᵀA + shift (lanes), fail where it failed */
static void classify(Group *g, Extra *e, const real *G, const real *Ginv, const real *Gfail, real eps_abs,
                     real eps_rel, real eps_inf) {
  const int n = g->n, m = g->m;
  real bad[LANES];
  LOOP bad[k] = e->bad[k];
  for (int j = 0; j < n; j++) LOOP bad[k] = isfinite(V(e->xs, j)[k]) ? bad[k] : 1;
  for (int i = 0; i < m; i++) LOOP bad[k] = isfinite(V(e->ys, i)[k]) ? bad[k] : 1;
  for (int j = 0; j < n; j++) LOOP V(e->xs, j)[k] = bad[k] != 0 ? 0 : V(e->xs, j)[k];
  for (int i = 0; i < m; i++) LOOP V(e->ys, i)[k] = bad[k] != 0 ? 0 : V(e->ys, i)[k];
  /* residuals: Px + q + Aᵀy and Ax outside [l, u] */
  real p_res[LANES] = {0}, d_res[LANES] = {0}, ax_max[LANES] = {0}, px_max[LANES] = {0};
  real aty_max[LANES] = {0}, q_max[LANES] = {0};
  a_mul_A(g, e->Ar, e->xs, g->Ax);
  for (int i = 0; i < m; i++) {
    const real *ax = V(g->Ax, i), *lo = V(e->lr, i), *up = V(e->ur, i);
    LOOP {
      const real clip = MIN(MAX(ax[k], lo[k]), up[k]);
      p_res[k] = MAX(p_res[k], fabs(ax[k] - clip));
      ax_max[k] = MAX(ax_max[k], fabs(ax[k]));
    }
  }
  at_mul_A(g, e->Ar, e->ys, g->rd, 0);
  for (int j = 0; j < n; j++) {
    real px[LANES] = {0};
    for (int l = 0; l < n; l++) {
      const real *p = V(e->Pr, j * n + l), *xl = V(e->xs, l);
      LOOP px[k] += p[k] * xl[k];
    }
    const real *qj = V(e->qr, j), *aty = V(g->rd, j);
    LOOP {
      d_res[k] = MAX(d_res[k], fabs(px[k] + qj[k] + aty[k]));
      px_max[k] = MAX(px_max[k], fabs(px[k]));
      aty_max[k] = MAX(aty_max[k], fabs(aty[k]));
      q_max[k] = MAX(q_max[k], fabs(qj[k]));
    }
  }
  /* primal infeasibility: δy projected on null(Aᵀ), then on the polar of the bounds' cone */
  for (int i = 0; i < m; i++) LOOP V(e->c, i)[k] = isfinite(V(e->dys, i)[k]) ? V(e->dys, i)[k] : 0;
  at_mul_A(g, e->Ar, e->c, e->v, 0);
  lane_chol_solve(G, Ginv, n, e->v, g->rhs);
  for (int j = 0; j < n; j++) LOOP V(e->v, j)[k] = Gfail[k] != 0 ? V(e->v, j)[k] : V(g->rhs, j)[k];
  a_mul_A(g, e->Ar, e->v, g->Ax);
  real norm[LANES] = {0}, support[LANES] = {0};
  for (int i = 0; i < m; i++) {
    real *ci = V(e->c, i);
    const real *ax = V(g->Ax, i), *lo = V(e->lr, i), *up = V(e->ur, i);
    LOOP {
      real t = ci[k] - ax[k];
      t = isinf(up[k]) ? MIN(t, (real)0) : t;
      t = isinf(lo[k]) ? MAX(t, (real)0) : t;
      ci[k] = t;
      norm[k] = MAX(norm[k], fabs(t));
      support[k] += (t > 0 && !isinf(up[k])) ? up[k] * t : 0;
      support[k] += (t < 0 && !isinf(lo[k])) ? lo[k] * t : 0;
    }
  }
  at_mul_A(g, e->Ar, e->c, e->v, 0);
  real aty_c[LANES] = {0};
  for (int j = 0; j < n; j++) LOOP aty_c[k] = MAX(aty_c[k], fabs(V(e->v, j)[k]));
  /* dual infeasibility: Pδx ≈ 0, qᵀδx < 0, Aδx in the recession cone of [l, u] */
  real dnorm[LANES] = {0}, qdx[LANES] = {0}, pdx[LANES] = {0}, out_cone[LANES] = {0};
  for (int j = 0; j < n; j++) {
    real *t = V(e->v, j);
    LOOP {
      t[k] = isfinite(V(e->dxs, j)[k]) ? V(e->dxs, j)[k] : 0;
      dnorm[k] = MAX(dnorm[k], fabs(t[k]));
      qdx[k] += V(e->qr, j)[k] * t[k];
    }
  }
  for (int j = 0; j < n; j++) {
    real s[LANES] = {0};
    for (int l = 0; l < n; l++) LOOP s[k] += V(e->Pr, j * n + l)[k] * V(e->v, l)[k];
    LOOP pdx[k] = MAX(pdx[k], fabs(s[k]));
  }
  a_mul_A(g, e->Ar, e->v, g->Ax);
  for (int i = 0; i < m; i++) {
    const real *ax = V(g->Ax, i), *lo = V(e->lr, i), *up = V(e->ur, i);
    LOOP {
      const real lim = eps_inf * dnorm[k];
      const int inside = (isinf(up[k]) || ax[k] <= lim) && (isinf(lo[k]) || ax[k] >= -lim);
      out_cone[k] = inside ? out_cone[k] : 1;
    }
  }
  LOOP {
    const int solved = p_res[k] <= eps_abs + eps_rel * ax_max[k] &&
                       d_res[k] <= eps_abs + eps_rel * MAX(MAX(px_max[k], aty_max[k]), q_max[k]);
    const int primal_inf = norm[k] > 0 && aty_c[k] <= eps_inf * norm[k] && support[k] < -eps_inf * norm[k];
    const int dual_inf = dnorm[k] > 0 && pdx[k] <= eps_inf * dnorm[k] && qdx[k] < -eps_inf * dnorm[k] &&
                         out_cone[k] == 0;
    e->status[k] = bad[k] != 0 ? 4 : solved ? 0 : primal_inf ? 2 : dual_inf ? 3 : 1;
    e->prim[k] = bad[k] != 0 ? INFINITY : p_res[k];
    e->dual[k] = bad[k] != 0 ? INFINITY : d_res[k];
  }
}

/* Solve B convex QPs  min ½xᵀPx + qᵀx  s.t.  l ≤ Ax ≤ u  (the whole of `solve` for method "ipm"):
 * A is (m, n) when a_shared, else (B, m, n); x0 (B, n) and y0 (B, m) may be NULL. Writes x (B, n),
 * y (B, m), status (B), primal and dual residuals (B). Returns nonzero if memory ran out. */
int canter_qp_solve(int64_t batch, int n, int m, const real *P, const real *q, const real *A, int a_shared,
                    const real *l, const real *u, const real *x0, const real *y0, int iterations, int passes,
                    real reg, real tol, real eq_gap, real eps_abs, real eps_rel, real eps_inf, real *x_out,
                    real *y_out, int64_t *status_out, real *prim_out, real *dual_out, int threads) {
  const int64_t groups = (batch + LANES - 1) / LANES;
  const int m2 = 2 * m;
  int status = 0;
  /* a shared A: finite entries, its scaled rows and the certificate's factor, once */
  const int shared_finite = a_shared ? all_finite(A, (size_t)m * n) : 1;
  real *shared = (real *)malloc(sizeof(real) * ((size_t)3 * m * n + m + 1));
  if (shared == NULL) return 1;
  real *A_clean = shared, *As = A_clean + (size_t)m * n, *E_shared = As + (size_t)m * n;
  if (a_shared) {
    for (int i = 0; i < m; i++) {
      E_shared[i] = 1;
      for (int j = 0; j < n; j++) {
        const real a = A[i * n + j];
        A_clean[i * n + j] = As[i * n + j] = isfinite(a) ? a : 0;
      }
    }
    for (int pass = 0; pass < passes; pass++)
      for (int i = 0; i < m; i++) {
        real norm = 0;
        for (int j = 0; j < n; j++) norm = MAX(norm, fabs(As[i * n + j]));
        const real e = sqrt(inv_norm(norm));
        for (int j = 0; j < n; j++) As[i * n + j] *= e;
        E_shared[i] *= e;
      }
  }
#pragma omp parallel num_threads(threads)
  {
    const size_t sizes[] = {
        (size_t)n * n, n, (size_t)m * n, m2, m2, 1,         /* P q A d mask count */
        n, m2, m2, 1, n, m2, n,                             /* x w z best_merit best_x best_z dxs */
        n, m2, 1, 1, (size_t)n * n, n, 1,                   /* rd rp mu merit M invdiag frozen */
        n, m2, n, m2, m2, m, 1, 1, m2, m2, m2, m,           /* rhs t dx dw dz Ax alpha sigma rc invw invz dd */
        (size_t)n * n, n, (size_t)m * n, m, m,              /* Pr qr Ar lr ur */
        1, n, m, 1, n, m, n, m, n, m, n, m, 1, 1, 1,        /* bad D E cost xs ys dxs dys cm ra v c status prim dual */
        (size_t)n * n, n, 1,                                /* G Ginv Gfail */
    };
    enum { COUNT = (int)(sizeof(sizes) / sizeof(sizes[0])) };
    size_t total = 0;
    for (int i = 0; i < COUNT; i++) total += sizes[i] * LANES;
    real *pool = (real *)aligned_alloc(64, ((total * sizeof(real) + 63) / 64) * 64);
    int *rowptr = (int *)malloc(sizeof(int) * (size_t)(m + 1));
    int *cols = (int *)malloc(sizeof(int) * ((size_t)m * n + 1));
    const int ok = pool != NULL && rowptr != NULL && cols != NULL;
    if (!ok) {
#pragma omp atomic write
      status = 1;
    }
    real *a[COUNT];
    real *cursor = pool;
    for (int i = 0; i < COUNT; i++) {
      a[i] = cursor;
      cursor = ok ? cursor + sizes[i] * LANES : cursor;
    }
    Group g = {n, m, a[0], a[1], a[2], a[3], a[4], a[5], rowptr, cols, a[6], a[7], a[8], a[9], a[10], a[11],
               a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24],
               a[25], a[26], a[27], a[28], a[29], a[30], a[31]};
    Extra e = {a[32], a[33], a[34], a[35], a[36], a[37], a[38], a[39], a[40], a[41], a[42], a[43],
               a[44], a[45], a[46], a[47], a[48], a[49], a[50], a[51]};
    real *G = a[52], *Ginv = a[53], *Gfail = a[54];
#pragma omp for schedule(static)
    for (int64_t gi = 0; gi < groups; gi++) {
      if (!ok) continue;
      const int64_t b0 = gi * LANES;
      gather(e.Pr, P, b0, batch, n * n, (int64_t)n * n);
      gather(e.qr, q, b0, batch, n, n);
      gather(e.Ar, a_shared ? A_clean : A, b0, batch, m * n, a_shared ? 0 : (int64_t)m * n);
      gather(e.lr, l, b0, batch, m, m);
      gather(e.ur, u, b0, batch, m, m);
      /* columns of each row that are nonzero in some problem of the group (NaN counts) */
      int nnz = 0;
      for (int i = 0; i < m; i++) {
        rowptr[i] = nnz;
        for (int j = 0; j < n; j++) {
          int any = 0;
          for (int k = 0; k < LANES; k++) any |= !(V(e.Ar, i * n + j)[k] == 0);
          if (any) cols[nnz++] = j;
        }
      }
      rowptr[m] = nnz;
      validate(&g, &e, a_shared, shared_finite);
      scale(&g, &e, a_shared, As, E_shared, passes);
      /* scaled bounds (in g.t, g.rc), start x̄ and warm multipliers ȳ (in g.rp) */
      for (int i = 0; i < m; i++) {
        const real *lo = V(e.lr, i), *up = V(e.ur, i), *E = V(e.E, i);
        LOOP {
          V(g.t, i)[k] = e.bad[k] != 0 ? -INFINITY : E[k] * lo[k];
          V(g.rc, i)[k] = e.bad[k] != 0 ? INFINITY : E[k] * up[k];
        }
      }
      if (x0 != NULL) {
        gather(g.x, x0, b0, batch, n, n);
        for (int j = 0; j < n; j++) LOOP {
            const real v = V(g.x, j)[k] / V(e.D, j)[k];
            V(g.x, j)[k] = isfinite(v) ? v : 0;
          }
      } else {
        memset(g.x, 0, sizeof(real) * (size_t)n * LANES);
      }
      if (y0 != NULL) {
        gather(g.rp, y0, b0, batch, m, m);
        for (int i = 0; i < m; i++) LOOP {
            const real v = V(g.rp, i)[k];
            V(g.rp, i)[k] = (isfinite(v) ? v : 0) * e.cost[k] / V(e.E, i)[k];
          }
      }
      /* inequality form and starting point (as ipm.ipm) */
      a_mul(&g, g.x, g.Ax);
      LOOP g.count[k] = 0;
      for (int i = 0; i < m; i++) {
        const real *li = V(g.t, i), *ui = V(g.rc, i), *ax = V(g.Ax, i), *yi = V(g.rp, i);
        real *du = V(g.d, i), *dl = V(g.d, m + i), *ku = V(g.mask, i), *kl = V(g.mask, m + i);
        real *wu = V(g.w, i), *wl = V(g.w, m + i), *zu = V(g.z, i), *zl = V(g.z, m + i);
        LOOP {
          const real big = MAX(fabs(li[k]), fabs(ui[k]));
          const real gap = eq_gap * (1 + (isfinite(big) ? big : 0));
          const real widen = ui[k] - li[k] < gap ? gap : 0;
          ku[k] = isfinite(ui[k]) ? 1 : 0;
          kl[k] = isfinite(li[k]) ? 1 : 0;
          du[k] = (isfinite(ui[k]) ? ui[k] : 0) + widen;
          dl[k] = -((isfinite(li[k]) ? li[k] : 0) - widen);
          g.count[k] += ku[k] + kl[k];
          wu[k] = ku[k] > 0 ? MAX(du[k] - ax[k], (real)1) : 1;
          wl[k] = kl[k] > 0 ? MAX(dl[k] + ax[k], (real)1) : 1;
          zu[k] = y0 != NULL ? (MAX(yi[k], (real)0) + WARM_MULTIPLIER) * ku[k] : ku[k];
          zl[k] = y0 != NULL ? (MAX(-yi[k], (real)0) + WARM_MULTIPLIER) * kl[k] : kl[k];
        }
      }
      LOOP g.count[k] = MAX(g.count[k], (real)1);
      LOOP g.best_merit[k] = INFINITY;
      memcpy(g.best_x, g.x, sizeof(real) * (size_t)n * LANES);
      memcpy(g.best_z, g.z, sizeof(real) * (size_t)m2 * LANES);
      memset(g.dxs, 0, sizeof(real) * (size_t)n * LANES);
      for (int it = 0; it < iterations; it++) iterate(&g, reg, tol);
      /* certificate candidates (last step and multipliers), then each problem's best iterate,
       * all back in the problems' units */
      residuals(&g);
      LOOP g.t[k] = g.merit[k] < g.best_merit[k];
      for (int j = 0; j < n; j++) LOOP {
          const real *D = V(e.D, j);
          V(e.dxs, j)[k] = D[k] * V(g.dxs, j)[k];
          V(e.xs, j)[k] = D[k] * (g.t[k] != 0 ? V(g.x, j)[k] : V(g.best_x, j)[k]);
        }
      for (int i = 0; i < m; i++) LOOP {
          const real f = V(e.E, i)[k] / e.cost[k];
          const int best = g.t[k] == 0;
          V(e.dys, i)[k] = f * (V(g.z, i)[k] - V(g.z, m + i)[k]);
          V(e.ys, i)[k] = f * (best ? V(g.best_z, i)[k] - V(g.best_z, m + i)[k] : V(g.z, i)[k] - V(g.z, m + i)[k]);
        }
      /* the certificate projection's factor: AᵀA + (1e-12 max diag + sqrt(tiny)) I */
      for (int j = 0; j < n; j++)
        for (int c = 0; c <= j; c++) {
          real s[LANES] = {0};
          for (int i = 0; i < m; i++) LOOP s[k] += V(e.Ar, i * n + j)[k] * V(e.Ar, i * n + c)[k];
          LOOP V(G, j * n + c)[k] = s[k];
        }
      real dmax[LANES] = {0};
      for (int j = 0; j < n; j++) LOOP dmax[k] = MAX(dmax[k], V(G, j * n + j)[k]);
      for (int j = 0; j < n; j++) LOOP V(G, j * n + j)[k] += (real)1e-12 * dmax[k] + SQRT_TINY;
      lane_cholesky(G, Ginv, n, Gfail);
      classify(&g, &e, G, Ginv, Gfail, eps_abs, eps_rel, eps_inf);
      scatter(x_out, e.xs, b0, batch, n);
      scatter(y_out, e.ys, b0, batch, m);
      scatter(prim_out, e.prim, b0, batch, 1);
      scatter(dual_out, e.dual, b0, batch, 1);
      for (int k = 0; k < LANES && b0 + k < batch; k++) status_out[b0 + k] = (int64_t)e.status[k];
    }
    free(pool);
    free(rowptr);
    free(cols);
  }
  free(shared);
  return status;
}
