/* Fused CPU kernel of the batched Mehrotra interior-point method (canter/control/qp/ipm.py).
 *
 * The same iteration as `ipm_step`, formula for formula, but compiled: problems are taken in
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

#define LANES 8
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
  real *rhs, *t, *dx, *dw, *dz, *Ax, *alpha, *mu_aff, *sigma, *rc, *invw, *invz, *dd;
} Group;

/* out (n) = Aᵀ (v[:m] − v[m:])  (v has 2m entries), or Aᵀ v when half == 0 */
static void at_mul(const Group *g, const real *v, real *out, int two_sided) {
  const int n = g->n, m = g->m;
  for (int j = 0; j < n; j++) LOOP V(out, j)[k] = 0;
  for (int i = 0; i < m; i++) {
    real vi[LANES];
    LOOP vi[k] = two_sided ? V(v, i)[k] - V(v, m + i)[k] : V(v, i)[k];
    for (int p = g->rowptr[i]; p < g->rowptr[i + 1]; p++) {
      const int j = g->cols[p];
      const real *a = V(g->A, i * n + j);
      real *o = V(out, j);
      LOOP o[k] += a[k] * vi[k];
    }
  }
}

/* out (m) = A v */
static void a_mul(const Group *g, const real *v, real *out) {
  const int n = g->n, m = g->m;
  for (int i = 0; i < m; i++) {
    real acc[LANES] = {0};
    for (int p = g->rowptr[i]; p < g->rowptr[i + 1]; p++) {
      const int j = g->cols[p];
      const real *a = V(g->A, i * n + j), *vj = V(v, j);
      LOOP acc[k] += a[k] * vj[k];
    }
    LOOP V(out, i)[k] = acc[k];
  }
}

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
  LOOP fail[k] = 0;
  for (int j = 0; j < n; j++) {
    real *Mjj = V(g->M, j * n + j), *inv = V(g->invdiag, j);
    for (int p = 0; p < j; p++) {
      const real *Ljp = V(g->M, j * n + p);
      LOOP Mjj[k] -= Ljp[k] * Ljp[k];
    }
    LOOP {
      const int bad = !(Mjj[k] > 0);
      fail[k] = bad ? 1 : fail[k];
      Mjj[k] = sqrt(bad ? (real)1 : Mjj[k]);
      inv[k] = 1 / Mjj[k];
    }
    for (int i = j + 1; i < n; i++) {
      real *Mij = V(g->M, i * n + j);
      for (int p = 0; p < j; p++) {
        const real *Lip = V(g->M, i * n + p), *Ljp = V(g->M, j * n + p);
        LOOP Mij[k] -= Lip[k] * Ljp[k];
      }
      LOOP Mij[k] *= inv[k];
    }
  }
}

/* x = M⁻¹ b with the factor in g->M (b and x may alias) */
static void chol_solve(const Group *g, const real *b, real *x) {
  const int n = g->n;
  for (int j = 0; j < n; j++) {
    real acc[LANES];
    LOOP acc[k] = V(b, j)[k];
    for (int p = 0; p < j; p++) {
      const real *Ljp = V(g->M, j * n + p), *xp = V(x, p);
      LOOP acc[k] -= Ljp[k] * xp[k];
    }
    LOOP V(x, j)[k] = acc[k] * V(g->invdiag, j)[k];
  }
  for (int j = n - 1; j >= 0; j--) {
    real acc[LANES];
    LOOP acc[k] = V(x, j)[k];
    for (int p = j + 1; p < n; p++) {
      const real *Lpj = V(g->M, p * n + j), *xp = V(x, p);
      LOOP acc[k] -= Lpj[k] * xp[k];
    }
    LOOP V(x, j)[k] = acc[k] * V(g->invdiag, j)[k];
  }
}

/* the Newton direction (dx, dw, dz) for the complementarity target rc (2m) */
static void direction(Group *g, const real *rc) {
  const int n = g->n, m = g->m;
  for (int i = 0; i < 2 * m; i++) {
    const real *z = V(g->z, i), *rp = V(g->rp, i), *r = V(rc, i), *iw = V(g->invw, i), *mk = V(g->mask, i);
    real *t = V(g->t, i);
    LOOP t[k] = (z[k] * rp[k] - r[k]) * iw[k] * mk[k];
  }
  at_mul(g, g->t, g->rhs, 1);
  for (int j = 0; j < n; j++) LOOP V(g->rhs, j)[k] = -V(g->rd, j)[k] - V(g->rhs, j)[k];
  chol_solve(g, g->rhs, g->dx);
  for (int j = 0; j < n; j++) LOOP V(g->dx, j)[k] = g->frozen[k] != 0 ? 0 : V(g->dx, j)[k];
  a_mul(g, g->dx, g->Ax);
  for (int i = 0; i < 2 * m; i++) {
    const real *ax = V(g->Ax, i < m ? i : i - m);
    const real sgn = i < m ? 1 : -1;
    const real *z = V(g->z, i), *rp = V(g->rp, i), *r = V(rc, i), *iw = V(g->invw, i), *mk = V(g->mask, i);
    real *dw = V(g->dw, i), *dz = V(g->dz, i);
    LOOP {
      dw[k] = (-rp[k] - sgn * ax[k]) * mk[k];
      dz[k] = (-r[k] - z[k] * dw[k]) * iw[k] * mk[k];
    }
  }
}

/* largest α ≤ 1 keeping w + α dw ≥ 0 and z + α dz ≥ 0: 1 / max(1, max −dv/v) (v ≥ TINY where
 * masked in; masked-out rows have dv = 0) */
static void step_to_boundary(Group *g, real *alpha) {
  const int m2 = 2 * g->m;
  real worst[LANES];
  LOOP worst[k] = 1;
  for (int i = 0; i < m2; i++) {
    const real *iw = V(g->invw, i), *dw = V(g->dw, i), *iz = V(g->invz, i), *dz = V(g->dz, i);
    LOOP {
      const real aw = dw[k] < 0 ? -dw[k] * iw[k] : 0;
      const real az = dz[k] < 0 ? -dz[k] * iz[k] : 0;
      worst[k] = MAX(worst[k], MAX(aw, az));
    }
  }
  LOOP alpha[k] = 1 / worst[k];
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
  step_to_boundary(g, g->alpha);
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
  step_to_boundary(g, g->alpha);
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

/* gather rows [b0, b0 + LANES) of a (B, len) array into lane-interleaved form (short groups
 * repeat their last problem) */
static void gather(real *dst, const real *src, int64_t b0, int64_t batch, int len, int64_t stride) {
  for (int k = 0; k < LANES; k++) {
    int64_t b = b0 + k < batch ? b0 + k : batch - 1;
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

/* Set up and run `iterations` Mehrotra steps on B scaled problems (see ipm.py): each row of
 * l ≤ Ax ≤ u becomes Cx + w = d, w ≥ 0 with C = [A; −A], d = [u; −l] (infinite bounds masked out,
 * rows with u − l < gap widened to ±gap, gap = eq_gap (1 + max(|l|, |u|))); w starts at
 * max(d − Cx, 1), z at 1 or at the warm-start multipliers y0 (NULL for none) plus 1e-2. A is (m, n)
 * when a_shared, else (B, m, n). Writes each problem's best iterate to x and y, and the certificate
 * candidates: the last step to dx and the last multipliers to dy. */
int canter_ipm(int64_t batch, int n, int m, int iterations, real reg, real tol, real eq_gap, const real *P,
               const real *q, const real *A, int a_shared, const real *l, const real *u, real *x,
               const real *y0, real *y, real *dx, real *dy, int threads) {
  const int64_t groups = (batch + LANES - 1) / LANES;
  const int m2 = 2 * m;
  int status = 0;
#pragma omp parallel num_threads(threads)
  {
    const size_t sizes[] = {
        (size_t)n * n, n, (size_t)m * n, m2, m2, 1,        /* P q A d mask count */
        n, m2, m2, 1, n, m2, n,                            /* x w z best_merit best_x best_z dxs */
        n, m2, 1, 1, (size_t)n * n, n, 1,                  /* rd rp mu merit M invdiag frozen */
        n, m2, n, m2, m2, m, 1, 1, 1, m2, m2, m2, m,       /* rhs t dx dw dz Ax alpha mu_aff sigma rc invw invz dd */
    };
    const int count_arrays = (int)(sizeof(sizes) / sizeof(sizes[0]));
    size_t total = 0;
    for (int i = 0; i < count_arrays; i++) total += sizes[i] * LANES;
    real *pool = (real *)aligned_alloc(64, ((total * sizeof(real) + 63) / 64) * 64);
    int *rowptr = (int *)malloc(sizeof(int) * (size_t)(m + 1));
    int *cols = (int *)malloc(sizeof(int) * (size_t)m * (size_t)n);
    const int ok = pool != NULL && rowptr != NULL && cols != NULL;
    if (!ok) {
#pragma omp atomic write
      status = 1;
    }
    {
      real *arrays[33];
      real *cursor = pool;
      for (int i = 0; i < count_arrays; i++) {
        arrays[i] = cursor;
        cursor = ok ? cursor + sizes[i] * LANES : cursor;
      }
      Group g = {n, m, arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], arrays[5], rowptr, cols,
                 arrays[6], arrays[7], arrays[8], arrays[9], arrays[10], arrays[11], arrays[12],
                 arrays[13], arrays[14], arrays[15], arrays[16], arrays[17], arrays[18], arrays[19],
                 arrays[20], arrays[21], arrays[22], arrays[23], arrays[24], arrays[25], arrays[26],
                 arrays[27], arrays[28], arrays[29], arrays[30], arrays[31], arrays[32]};
#pragma omp for schedule(static)
      for (int64_t gi = 0; gi < groups; gi++) {
        if (!ok) continue;
        const int64_t b0 = gi * LANES;
        gather(g.P, P, b0, batch, n * n, (int64_t)n * n);
        gather(g.q, q, b0, batch, n, n);
        if (a_shared)
          gather(g.A, A, 0, 1, m * n, 0);
        else
          gather(g.A, A, b0, batch, m * n, (int64_t)m * n);
        gather(g.x, x, b0, batch, n, n);
        gather(g.t, l, b0, batch, m, m);
        gather(g.rc, u, b0, batch, m, m);
        if (y0 != NULL) gather(g.rp, y0, b0, batch, m, m);
        /* columns of each row that are nonzero in some problem of the group */
        int nnz = 0;
        for (int i = 0; i < m; i++) {
          rowptr[i] = nnz;
          for (int j = 0; j < n; j++) {
            int any = 0;
            for (int k = 0; k < LANES; k++) any |= V(g.A, i * n + j)[k] != 0;
            if (any) cols[nnz++] = j;
          }
        }
        rowptr[m] = nnz;
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
        /* last multipliers and step: certificates; then each problem's best iterate */
        for (int i = 0; i < m; i++) LOOP V(g.Ax, i)[k] = V(g.z, i)[k] - V(g.z, m + i)[k];
        scatter(dy, g.Ax, b0, batch, m);
        scatter(dx, g.dxs, b0, batch, n);
        residuals(&g);
        LOOP g.t[k] = g.merit[k] < g.best_merit[k];
        for (int j = 0; j < n; j++) LOOP V(g.x, j)[k] = g.t[k] != 0 ? V(g.x, j)[k] : V(g.best_x, j)[k];
        for (int i = 0; i < m2; i++) LOOP V(g.z, i)[k] = g.t[k] != 0 ? V(g.z, i)[k] : V(g.best_z, i)[k];
        scatter(x, g.x, b0, batch, n);
        for (int i = 0; i < m; i++) LOOP V(g.Ax, i)[k] = V(g.z, i)[k] - V(g.z, m + i)[k];
        scatter(y, g.Ax, b0, batch, m);
      }
    }
    free(pool);
    free(rowptr);
    free(cols);
  }
  return status;
}

/* ---- per-problem validation and post-processing (scalar; cheap next to the iterations) ---- */

#define EPS ((real)(sizeof(real) == 8 ? 2.220446049250313e-16 : 1.1920928955078125e-07))
#define SQRT_TINY ((real)(sizeof(real) == 8 ? 1.4916681462400413e-154 : 1.0842021724855044e-19))

/* in-place lower Cholesky of the n × n matrix M (row-major); 0 on success */
static int cholesky(real *M, int n) {
  for (int j = 0; j < n; j++) {
    real s = M[j * n + j];
    for (int p = 0; p < j; p++) s -= M[j * n + p] * M[j * n + p];
    if (!(s > 0)) return 1;
    s = sqrt(s);
    M[j * n + j] = s;
    for (int i = j + 1; i < n; i++) {
      real t = M[i * n + j];
      for (int p = 0; p < j; p++) t -= M[i * n + p] * M[j * n + p];
      M[i * n + j] = t / s;
    }
  }
  return 0;
}

static void cholesky_solve(const real *L, int n, real *b) {
  for (int j = 0; j < n; j++) {
    real t = b[j];
    for (int p = 0; p < j; p++) t -= L[j * n + p] * b[p];
    b[j] = t / L[j * n + j];
  }
  for (int j = n - 1; j >= 0; j--) {
    real t = b[j];
    for (int p = j + 1; p < n; p++) t -= L[p * n + j] * b[p];
    b[j] = t / L[j * n + j];
  }
}

/* G = Cholesky factor of AᵀA + (1e-12 max diag + sqrt(tiny)) I (the certificate projection's
 * matrix); nonzero when the factorization fails (then the projection is skipped) */
static int gram_factor(const real *A, int n, int m, real *G) {
  real diag_max = 0;
  for (int j = 0; j < n; j++)
    for (int k = 0; k <= j; k++) {
      real s = 0;
      for (int i = 0; i < m; i++) s += A[i * n + j] * A[i * n + k];
      G[j * n + k] = s;
      if (j == k) diag_max = MAX(diag_max, s);
    }
  const real shift = (real)1e-12 * diag_max + SQRT_TINY;
  for (int j = 0; j < n; j++) G[j * n + j] += shift;
  return cholesky(G, n);
}

static int all_finite(const real *v, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

/* invalid[b] = 1 for data that cannot define a convex QP: non-finite P, q or A; a NaN bound,
 * l > u, l = +inf or u = −inf; an asymmetric P, or one that is not PSD (Cholesky of the
 * symmetric part shifted by 1e3·eps·max|P| + sqrt(tiny) fails); as `problem.invalid_problems`. */
void canter_qp_validate(int64_t batch, int n, int m, const real *P, const real *q, const real *A, int a_shared,
                        const real *l, const real *u, uint8_t *invalid, int threads) {
  const int shared_finite = a_shared ? all_finite(A, (size_t)m * n) : 1;
#pragma omp parallel num_threads(threads)
  {
    real *M = (real *)malloc(sizeof(real) * (size_t)n * n);
#pragma omp for schedule(static)
    for (int64_t b = 0; b < batch; b++) {
      const real *Pb = P + b * n * n, *lb = l + b * m, *ub = u + b * m;
      int bad = !all_finite(Pb, (size_t)n * n) || !all_finite(q + b * n, n) ||
                !(a_shared ? shared_finite : all_finite(A + b * (int64_t)m * n, (size_t)m * n));
      for (int i = 0; i < m && !bad; i++)
        bad = isnan(lb[i]) || isnan(ub[i]) || lb[i] > ub[i] || lb[i] == INFINITY || ub[i] == -INFINITY;
      if (!bad) {
        real scale = 0, asym = 0;
        for (int i = 0; i < n * n; i++) scale = MAX(scale, fabs(Pb[i]));
        for (int i = 0; i < n; i++)
          for (int j = 0; j < n; j++) {
            asym = MAX(asym, fabs(Pb[i * n + j] - Pb[j * n + i]));
            M[i * n + j] = (real)0.5 * (Pb[i * n + j] + Pb[j * n + i]);
          }
        const real shift = (real)1e3 * EPS * scale + SQRT_TINY;
        for (int i = 0; i < n; i++) M[i * n + i] += shift;
        bad = asym > (real)1e3 * EPS * (1 + scale) || cholesky(M, n) != 0;
      }
      invalid[b] = (uint8_t)bad;
    }
    free(M);
  }
}

/* Residuals, infeasibility certificates and status of each problem, in its own units, as
 * `solve._finish`: x, y are zeroed (and residuals +inf) for invalid or non-finite results. */
void canter_qp_finish(int64_t batch, int n, int m, const real *P, const real *q, const real *A, int a_shared,
                      const real *l, const real *u, const uint8_t *invalid, const real *D, const real *E,
                      const real *cost, real *x, real *y, const real *dx, const real *dy, real eps_abs, real eps_rel, real eps_inf, int64_t *status, real *prim,
                      real *dual, int threads) {
  real *G_shared = NULL;
  int shared_failed = 0;
  if (a_shared) {
    G_shared = (real *)malloc(sizeof(real) * (size_t)n * n);
    shared_failed = gram_factor(A, n, m, G_shared);
  }
#pragma omp parallel num_threads(threads)
  {
    real *work = (real *)malloc(sizeof(real) * ((size_t)n * n + 4 * (size_t)n + 2 * (size_t)m));
    real *G = work, *v = G + n * n, *Px = v + n, *Aty = Px + n, *t = Aty + n, *Ax = t + n, *c = Ax + m;
#pragma omp for schedule(static)
    for (int64_t b = 0; b < batch; b++) {
      const real *Pb = P + b * n * n, *qb = q + b * n, *lb = l + b * m, *ub = u + b * m;
      const real *Ab = a_shared ? A : A + b * (int64_t)m * n;
      real *xb = x + b * n, *yb = y + b * m;
      const real *Db = D + b * n, *Eb = E + b * m, ic = 1 / cost[b];
      for (int j = 0; j < n; j++) xb[j] *= Db[j];
      for (int i = 0; i < m; i++) yb[i] *= Eb[i] * ic;
      const int bad = invalid[b] || !all_finite(xb, n) || !all_finite(yb, m);
      if (bad) {
        memset(xb, 0, sizeof(real) * n);
        memset(yb, 0, sizeof(real) * m);
        status[b] = 4;
        prim[b] = dual[b] = INFINITY;
        continue;
      }
      /* residuals and tolerances */
      real p_res = 0, d_res = 0, ax_max = 0, px_max = 0, aty_max = 0, q_max = 0;
      for (int j = 0; j < n; j++) {
        real s = 0;
        for (int k = 0; k < n; k++) s += Pb[j * n + k] * xb[k];
        Px[j] = s;
        Aty[j] = 0;
      }
      for (int i = 0; i < m; i++) {
        real s = 0;
        for (int j = 0; j < n; j++) {
          s += Ab[i * n + j] * xb[j];
          Aty[j] += Ab[i * n + j] * yb[i];
        }
        p_res = MAX(p_res, fabs(s - MIN(MAX(s, lb[i]), ub[i])));
        ax_max = MAX(ax_max, fabs(s));
      }
      for (int j = 0; j < n; j++) {
        d_res = MAX(d_res, fabs(Px[j] + qb[j] + Aty[j]));
        px_max = MAX(px_max, fabs(Px[j]));
        aty_max = MAX(aty_max, fabs(Aty[j]));
        q_max = MAX(q_max, fabs(qb[j]));
      }
      const int solved = p_res <= eps_abs + eps_rel * ax_max &&
                         d_res <= eps_abs + eps_rel * MAX(MAX(px_max, aty_max), q_max);
      /* primal infeasibility: δy projected on null(Aᵀ), then on the polar of the bounds' cone */
      int failed = shared_failed;
      if (!a_shared) failed = gram_factor(Ab, n, m, G);
      const real *Gb = a_shared ? G_shared : G;
      for (int i = 0; i < m; i++) {
        const real e = dy[b * m + i] * Eb[i] * ic;
        c[i] = isfinite(e) ? e : 0;
      }
      for (int j = 0; j < n; j++) {
        real s = 0;
        for (int i = 0; i < m; i++) s += Ab[i * n + j] * c[i];
        v[j] = s;
      }
      if (!failed) cholesky_solve(Gb, n, v);
      real norm = 0, support = 0;
      for (int i = 0; i < m; i++) {
        real s = 0;
        for (int j = 0; j < n; j++) s += Ab[i * n + j] * v[j];
        real e = c[i] - s;
        if (isinf(ub[i])) e = MIN(e, (real)0);
        if (isinf(lb[i])) e = MAX(e, (real)0);
        c[i] = e;
        norm = MAX(norm, fabs(e));
        if (e > 0 && !isinf(ub[i])) support += ub[i] * e;
        if (e < 0 && !isinf(lb[i])) support += lb[i] * e;
      }
      real aty_c = 0;
      for (int j = 0; j < n; j++) {
        real s = 0;
        for (int i = 0; i < m; i++) s += Ab[i * n + j] * c[i];
        aty_c = MAX(aty_c, fabs(s));
      }
      const int primal_inf = norm > 0 && aty_c <= eps_inf * norm && support < -eps_inf * norm;
      /* dual infeasibility: Pδx ≈ 0, qᵀδx < 0, Aδx in the recession cone of [l, u] */
      real dnorm = 0, pdx = 0, qdx = 0;
      for (int j = 0; j < n; j++) {
        const real e = dx[b * n + j] * Db[j];
        t[j] = isfinite(e) ? e : 0;
        dnorm = MAX(dnorm, fabs(t[j]));
        qdx += qb[j] * t[j];
      }
      for (int j = 0; j < n; j++) {
        real s = 0;
        for (int k = 0; k < n; k++) s += Pb[j * n + k] * t[k];
        pdx = MAX(pdx, fabs(s));
      }
      int in_cone = 1;
      for (int i = 0; i < m; i++) {
        real s = 0;
        for (int j = 0; j < n; j++) s += Ab[i * n + j] * t[j];
        in_cone &= (isinf(ub[i]) || s <= eps_inf * dnorm) && (isinf(lb[i]) || s >= -eps_inf * dnorm);
      }
      const int dual_inf = dnorm > 0 && pdx <= eps_inf * dnorm && qdx < -eps_inf * dnorm && in_cone;
      status[b] = solved ? 0 : primal_inf ? 2 : dual_inf ? 3 : 1;
      prim[b] = p_res;
      dual[b] = d_res;
    }
    free(work);
  }
  free(G_shared);
}

static real inv_norm(real v) { return 1 / (v < (real)1e-4 ? (real)1 : MIN(v, (real)1e4)); }

/* Row scaling of a shared (m, n) A, `passes` Ruiz passes: Ā = EA (columns untouched). */
static void scale_shared_rows(int n, int m, const real *A, int passes, real *A_out, real *E) {
  for (int i = 0; i < m; i++) {
    E[i] = 1;
    for (int j = 0; j < n; j++) A_out[i * n + j] = isfinite(A[i * n + j]) ? A[i * n + j] : 0;
  }
  for (int pass = 0; pass < passes; pass++)
    for (int i = 0; i < m; i++) {
      real norm = 0;
      for (int j = 0; j < n; j++) norm = MAX(norm, fabs(A_out[i * n + j]));
      const real e = sqrt(inv_norm(norm));
      for (int j = 0; j < n; j++) A_out[i * n + j] *= e;
      E[i] *= e;
    }
}

/* Validation, sanitization and Ruiz equilibration in one pass over the data, as
 * `problem.invalid_problems` followed by `problem.sanitize_and_scale`: invalid problems become
 * min ½‖x‖²; P is symmetrized; `passes` Ruiz passes scale [P Aᵀ; A 0] (rows only for a shared A),
 * then the cost. Outputs P̄ (B,n,n), q̄ (B,n), Ā ((m,n) if shared else (B,m,n)), l̄, ū, E (B,m),
 * D (B,n), cost (B). */
void canter_qp_prepare(int64_t batch, int n, int m, const real *P, const real *q, const real *A, int a_shared,
                       const real *l, const real *u, int passes, uint8_t *invalid, real *P_out, real *q_out,
                       real *A_out, real *l_out, real *u_out, real *D, real *E, real *cost, int threads) {
  real *E_shared = NULL;
  if (a_shared) {
    E_shared = (real *)malloc(sizeof(real) * (size_t)m);
    scale_shared_rows(n, m, A, passes, A_out, E_shared);
  }
  canter_qp_validate(batch, n, m, P, q, A, a_shared, l, u, invalid, threads);
#pragma omp parallel num_threads(threads)
  {
    real *colmax = (real *)malloc(sizeof(real) * (size_t)n * 2);
    real *d = colmax + n;
#pragma omp for schedule(static)
    for (int64_t b = 0; b < batch; b++) {
      const int bad = invalid[b];
      const real *Pb = P + b * n * n, *Ab = A + b * (int64_t)m * n;
      real *Po = P_out + b * n * n, *qo = q_out + b * n, *Db = D + b * n, *Eb = E + b * m;
      real *Ao = a_shared ? A_out : A_out + b * (int64_t)m * n;
      for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
          Po[i * n + j] = bad ? (real)(i == j) : (real)0.5 * (Pb[i * n + j] + Pb[j * n + i]);
        qo[i] = bad ? 0 : q[b * n + i];
        Db[i] = 1;
      }
      if (a_shared) {
        for (int i = 0; i < m; i++) Eb[i] = E_shared[i];
      } else {
        for (int i = 0; i < m * n; i++) Ao[i] = bad ? 0 : Ab[i];
        for (int i = 0; i < m; i++) Eb[i] = 1;
        for (int pass = 0; pass < passes; pass++) {
          for (int j = 0; j < n; j++) {
            real c = 0;
            for (int i = 0; i < n; i++) c = MAX(c, fabs(Po[i * n + j]));
            colmax[j] = c;
          }
          for (int i = 0; i < m; i++) {
            real r = 0;
            for (int j = 0; j < n; j++) {
              r = MAX(r, fabs(Ao[i * n + j]));
              colmax[j] = MAX(colmax[j], fabs(Ao[i * n + j]));
            }
            const real e = sqrt(inv_norm(r));
            for (int j = 0; j < n; j++) Ao[i * n + j] *= e;
            Eb[i] *= e;
          }
          /* the column norms of A were taken before its rows were scaled, as in the torch path */
          for (int j = 0; j < n; j++) d[j] = sqrt(inv_norm(colmax[j]));
          for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) Po[i * n + j] *= d[i] * d[j];
            qo[i] *= d[i];
            Db[i] *= d[i];
          }
          for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) Ao[i * n + j] *= d[j];
        }
      }
      real c = 1;
      if (passes > 0) {
        real mean = 0, qmax = 0;
        for (int j = 0; j < n; j++) {
          real cm = 0;
          for (int i = 0; i < n; i++) cm = MAX(cm, fabs(Po[i * n + j]));
          mean += cm;
          qmax = MAX(qmax, fabs(qo[j]));
        }
        c = inv_norm(MAX(mean / n, qmax));
        for (int i = 0; i < n * n; i++) Po[i] *= c;
        for (int j = 0; j < n; j++) qo[j] *= c;
      }
      cost[b] = c;
      for (int i = 0; i < m; i++) {
        l_out[b * m + i] = bad ? -INFINITY : Eb[i] * l[b * m + i];
        u_out[b * m + i] = bad ? INFINITY : Eb[i] * u[b * m + i];
      }
    }
    free(colmax);
  }
  free(E_shared);
}
