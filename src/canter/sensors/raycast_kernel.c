// Batched pinhole ray casting of MuJoCo primitives (plane, sphere, capsule, ellipsoid, cylinder, box)
// for canter.sensors.cpu_camera: the fast path of the cpu camera. Built and loaded by raycast.py.
//
// Every env (threads take envs from a shared counter) keeps a z-buffer of planar depths. Each geom
// is tested only on the pixels of its screen rectangle: the projection of its bounding sphere (the
// whole image for planes and for spheres reaching behind the near plane), nearest first, skipping pixels
// that already hold a surface nearer than the geom can be. A pixel's ray leaves the camera position
// along R_cam (x, y, -1), so the ray parameter t of a hit is its planar depth; in the geom's frame the
// ray is o + t M (x, y, -1) with o = R_g^T (cam - pos_g), M = R_g^T R_cam. Each test returns the
// smallest t >= 0 where the ray meets the geom's surface, as MuJoCo's mj_ray does; a hit is kept when
// t < the z-buffer (initialised to far). Pixels whose nearest surface lies nearer than `near` then
// read as misses, as with Batch.ray and MuJoCo Warp. Outputs: depth (far for no hit), geom id (-1),
// and, when asked, the unit world normal (zero for no hit).
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

enum { PLANE = 0, SPHERE = 2, CAPSULE = 3, ELLIPSOID = 4, CYLINDER = 5, BOX = 6 };

typedef struct { double t, n[3]; } hit_t;  // t < 0: no hit; n: local-frame normal (not normalized)

static inline double smallest_root(double a, double b, double c) {  // a t^2 + 2 b t + c, a > 0
  double disc = b * b - a * c;
  if (disc < 0) return -1;
  double s = sqrt(disc), t = (-b - s) / a;
  return t >= 0 ? t : (-b + s) / a;
}

static inline hit_t ray_sphere(const double* o, const double* d, double r) {
  hit_t h = {-1, {0, 0, 0}};
  double t = smallest_root(d[0] * d[0] + d[1] * d[1] + d[2] * d[2], o[0] * d[0] + o[1] * d[1] + o[2] * d[2],
                           o[0] * o[0] + o[1] * o[1] + o[2] * o[2] - r * r);
  if (t < 0) return h;
  h.t = t;
  for (int k = 0; k < 3; k++) h.n[k] = o[k] + t * d[k];
  return h;
}

static inline hit_t ray_ellipsoid(const double* o, const double* d, const double* s) {
  double os[3] = {o[0] / s[0], o[1] / s[1], o[2] / s[2]}, ds[3] = {d[0] / s[0], d[1] / s[1], d[2] / s[2]};
  hit_t h = ray_sphere(os, ds, 1.0);
  if (h.t >= 0)
    for (int k = 0; k < 3; k++) h.n[k] /= s[k];
  return h;
}

static inline hit_t ray_plane(const double* o, const double* d, const double* s) {
  hit_t h = {-1, {0, 0, 1}};
  if (d[2] > -1e-15) return h;  // only the front (+z) face, as MuJoCo
  double t = -o[2] / d[2];
  if (t < 0) return h;
  double x = o[0] + t * d[0], y = o[1] + t * d[1];
  if ((s[0] <= 0 || fabs(x) <= s[0]) && (s[1] <= 0 || fabs(y) <= s[1])) h.t = t;
  return h;
}

static inline hit_t ray_box(const double* o, const double* d, const double* s) {
  hit_t h = {-1, {0, 0, 0}};
  double tmin = -INFINITY, tmax = INFINITY;
  int axis_in = -1, axis_out = -1;
  for (int k = 0; k < 3; k++) {
    if (fabs(d[k]) < 1e-15) {
      if (fabs(o[k]) > s[k]) return h;
      continue;
    }
    double inv = 1.0 / d[k], t1 = (-s[k] - o[k]) * inv, t2 = (s[k] - o[k]) * inv;
    if (t1 > t2) { double tmp = t1; t1 = t2; t2 = tmp; }
    if (t1 > tmin) { tmin = t1; axis_in = k; }
    if (t2 < tmax) { tmax = t2; axis_out = k; }
  }
  if (tmax < tmin || tmax < 0) return h;
  int axis = tmin >= 0 ? axis_in : axis_out;
  h.t = tmin >= 0 ? tmin : tmax;
  if (axis < 0) return h;
  double p = o[axis] + h.t * d[axis];
  h.n[axis] = p >= 0 ? 1 : -1;
  return h;
}

// capsule (caps = 1: hemispheres at z = +-half) or cylinder (caps = 0: flat discs)
static inline hit_t ray_round(const double* o, const double* d, double r, double half, int caps) {
  hit_t h = {-1, {0, 0, 0}};
  double a = d[0] * d[0] + d[1] * d[1];
  if (a > 1e-30) {  // the side
    double t = smallest_root(a, o[0] * d[0] + o[1] * d[1], o[0] * o[0] + o[1] * o[1] - r * r);
    if (t >= 0 && fabs(o[2] + t * d[2]) <= half) {
      h.t = t;
      h.n[0] = o[0] + t * d[0], h.n[1] = o[1] + t * d[1], h.n[2] = 0;
    }
  }
  for (int side = -1; side <= 1; side += 2) {
    double c[3] = {o[0], o[1], o[2] - side * half};
    if (caps) {
      hit_t cap = ray_sphere(c, d, r);
      if (cap.t >= 0 && (h.t < 0 || cap.t < h.t) && side * (c[2] + cap.t * d[2]) >= 0) h = cap;
    } else if (fabs(d[2]) > 1e-15) {
      double t = -c[2] / d[2];
      double x = o[0] + t * d[0], y = o[1] + t * d[1];
      if (t >= 0 && x * x + y * y <= r * r && (h.t < 0 || t < h.t)) {
        h.t = t;
        h.n[0] = 0, h.n[1] = 0, h.n[2] = side;
      }
    }
  }
  return h;
}

static inline __attribute__((always_inline)) hit_t ray_geom(int type, const double* o, const double* d, const double* s) {
  switch (type) {
    case PLANE: return ray_plane(o, d, s);
    case SPHERE: return ray_sphere(o, d, s[0]);
    case CAPSULE: return ray_round(o, d, s[0], s[1], 1);
    case ELLIPSOID: return ray_ellipsoid(o, d, s);
    case CYLINDER: return ray_round(o, d, s[0], s[1], 0);
    default: return ray_box(o, d, s);
  }
}

typedef struct {
  int r0, r1, c0, c1, width;
  double cx, cy, inv_focal, zfloor;
  int id;
} rect_t;

// test one geom on the pixels of its rectangle, keeping nearer hits; `type` is a constant at every
// call site, so each geom type gets its own loop without a branch on the type per pixel
static inline __attribute__((always_inline)) void draw(int type, const rect_t* rc, const double* o, const double* M,
                                                       const double* gr, const double* size, float* zbuf,
                                                       int32_t* ids, float* nrm) {
  for (int row = rc->r0; row <= rc->r1; row++) {
    double yv = (rc->cy - row - 0.5) * rc->inv_focal;
    double base[3] = {M[1] * yv - M[2], M[4] * yv - M[5], M[7] * yv - M[8]};
    for (int col = rc->c0; col <= rc->c1; col++) {
      int64_t p = (int64_t)row * rc->width + col;
      if (zbuf[p] <= rc->zfloor) continue;  // hidden behind a nearer surface
      double xv = (col + 0.5 - rc->cx) * rc->inv_focal;
      double d[3] = {M[0] * xv + base[0], M[3] * xv + base[1], M[6] * xv + base[2]};
      hit_t h = ray_geom(type, o, d, size);
      if (h.t < 0 || h.t >= zbuf[p]) continue;
      zbuf[p] = (float)h.t;
      ids[p] = rc->id;
      if (nrm) {  // world normal R_g n, unit
        double n[3], len;
        for (int i = 0; i < 3; i++) n[i] = gr[3 * i] * h.n[0] + gr[3 * i + 1] * h.n[1] + gr[3 * i + 2] * h.n[2];
        len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        len = len > 0 ? 1.0 / len : 0.0;
        for (int i = 0; i < 3; i++) nrm[3 * p + i] = (float)(n[i] * len);
      }
    }
  }
}

static inline int clampi(double v, int lo, int hi) {
  if (!(v > lo)) return lo;  // also NaN
  if (v > hi) return hi;
  return (int)v;
}

// Lambert shading of the hits, as canter.sensors.shading.shade (float32, same operation order)
typedef struct {
  const float* colors;           // (nenv or 1, ngeom_all + 1, 3) base colors; last row: background
  int64_t color_stride;          // floats between envs' tables (0: shared)
  int nlight;
  const float* light_vec;        // (nenv, nlight, 3): unit vector towards a directional light, or
                                 // the position of a positional light
  const int32_t* directional;    // (nlight,)
  const float* diffuse;          // (nlight, 3)
  const float* ambient;          // (3,)
  uint8_t* rgb;                  // (nenv, 3, H, W) output
} shade_t;

static void shade_env(const shade_t* sh, int64_t e, int64_t npix, int width, double focal, int ngeom_all,
                      const double* cp, const double* cr, const float* zbuf, const int32_t* ids, const float* nrm) {
  const float* table = sh->colors + e * sh->color_stride;
  const float* lights = sh->light_vec + e * sh->nlight * 3;
  uint8_t* out = sh->rgb + e * 3 * npix;
  const double cx = 0.5 * width, cy = 0.5 * (npix / width);
  for (int64_t p = 0; p < npix; p++) {
    const float* color = table + 3 * (ids[p] < 0 ? ngeom_all : ids[p]);
    const float* n = nrm + 3 * p;
    float light[3] = {sh->ambient[0], sh->ambient[1], sh->ambient[2]};
    for (int l = 0; l < sh->nlight; l++) {
      float to[3];
      if (sh->directional[l]) {
        to[0] = lights[3 * l], to[1] = lights[3 * l + 1], to[2] = lights[3 * l + 2];
      } else {  // towards the light from the hit point cam + t R (x, y, -1)
        double xv = ((p % width) + 0.5 - cx) / focal, yv = (cy - (p / width) - 0.5) / focal, hit[3], len = 0;
        for (int i = 0; i < 3; i++) {
          hit[i] = cp[i] + zbuf[p] * (cr[3 * i] * xv + cr[3 * i + 1] * yv - cr[3 * i + 2]);
          hit[i] = lights[3 * l + i] - hit[i];
          len += hit[i] * hit[i];
        }
        len = len > 0 ? 1.0 / sqrt(len) : 0.0;
        for (int i = 0; i < 3; i++) to[i] = (float)(hit[i] * len);
      }
      float lambert = n[0] * to[0] + n[1] * to[1] + n[2] * to[2];
      lambert = lambert > 0.0f ? lambert : 0.0f;
      for (int i = 0; i < 3; i++) light[i] += lambert * sh->diffuse[3 * l + i];
    }
    for (int i = 0; i < 3; i++) {
      float c = color[i] * light[i];
      c = c < 0.0f ? 0.0f : (c > 1.0f ? 1.0f : c);
      out[i * npix + p] = (uint8_t)(c * 255.0f + 0.5f);
    }
  }
}

// focals (nenv or 1) focal lengths in pixels, focal_stride 0 when shared. cam_pos (nenv,
// cam_stride_pos): the camera's 3 coordinates per env; cam_mat likewise 9 values.
// geom_pos (nenv, ngeom_all, 3), geom_mat (nenv, ngeom_all, 9); geom_size (nenv or 1, ngeom_all, 3),
// size_stride 0 when shared; geoms: ngeom ids to render; types, rbound: per listed geom. shading:
// NULL, or where to shade the hits into RGB (needs normal).
typedef struct {
  int64_t nenv;
  int width, height;
  const double *focals;
  int64_t focal_stride;
  double near, far;
  const double *cam_pos, *cam_mat;
  int64_t cam_stride_pos, cam_stride_mat;
  const double *geom_pos, *geom_mat;
  int ngeom_all;
  const double* geom_size;
  int64_t size_stride;
  int ngeom;
  const int *geoms, *types;
  const double* rbound;
  float* depth;
  int32_t* seg;
  float* normal;
  const shade_t* shading;
  int64_t next;  // the next env to render (atomic)
} job_t;

static void render_env(const job_t* j, int64_t e) {
  const int width = j->width, height = j->height, ngeom_all = j->ngeom_all, ngeom = j->ngeom;
  const double near = j->near, far = j->far;
  const double *cam_pos = j->cam_pos, *cam_mat = j->cam_mat, *geom_pos = j->geom_pos, *geom_mat = j->geom_mat;
  const double *geom_size = j->geom_size, *rbound = j->rbound;
  const int *geoms = j->geoms, *types = j->types;
  const int64_t cam_stride_pos = j->cam_stride_pos, cam_stride_mat = j->cam_stride_mat, size_stride = j->size_stride;
  const shade_t* shading = j->shading;
  const int64_t npix = (int64_t)width * height;
  const double cx = 0.5 * width, cy = 0.5 * height;
  float *depth = j->depth, *normal = j->normal;
  int32_t* seg = j->seg;
  {
    const double focal = j->focals[e * j->focal_stride], inv_focal = 1.0 / focal;  // pixels: (H/2) / tan(fovy/2)
    float* zbuf = depth + e * npix;
    int32_t* ids = seg + e * npix;
    float* nrm = normal ? normal + e * npix * 3 : NULL;
    for (int64_t p = 0; p < npix; p++) zbuf[p] = (float)far, ids[p] = -1;
    if (nrm) memset(nrm, 0, sizeof(float) * npix * 3);
    const double* cp = cam_pos + e * cam_stride_pos;
    const double* cr = cam_mat + e * cam_stride_mat;
    // draw order: nearest bounding sphere first, planes last, so that a pixel already holding a
    // surface nearer than a geom's nearest possible depth skips that geom's test
    int order[ngeom];
    double zmin[ngeom];
    for (int g = 0; g < ngeom; g++) {
      const double* gp = geom_pos + (e * ngeom_all + geoms[g]) * 3;
      double z = cr[2] * (cp[0] - gp[0]) + cr[5] * (cp[1] - gp[1]) + cr[8] * (cp[2] - gp[2]);
      zmin[g] = types[g] == PLANE ? INFINITY : z - rbound[g];
      int k = g;
      while (k > 0 && zmin[order[k - 1]] > zmin[g]) order[k] = order[k - 1], k--;
      order[k] = g;
    }
    for (int k = 0; k < ngeom; k++) {
      int g = order[k];
      int id = geoms[g];
      const double zfloor = types[g] == PLANE ? 0.0 : zmin[g];
      const double* gp = geom_pos + (e * ngeom_all + id) * 3;
      const double* gr = geom_mat + (e * ngeom_all + id) * 9;
      const double* size = geom_size + e * size_stride + id * 3;
      double rel[3] = {cp[0] - gp[0], cp[1] - gp[1], cp[2] - gp[2]};
      double o[3], M[9];  // o = R_g^T rel, M = R_g^T R_cam (row-major)
      for (int i = 0; i < 3; i++) {
        o[i] = gr[i] * rel[0] + gr[3 + i] * rel[1] + gr[6 + i] * rel[2];
        for (int j = 0; j < 3; j++) M[3 * i + j] = gr[i] * cr[j] + gr[3 + i] * cr[3 + j] + gr[6 + i] * cr[6 + j];
      }
      int r0 = 0, r1 = height - 1, c0 = 0, c1 = width - 1;
      if (types[g] != PLANE) {  // screen rectangle of the bounding sphere (camera frame: -c = R_cam^T rel)
        double x = -(cr[0] * rel[0] + cr[3] * rel[1] + cr[6] * rel[2]);
        double y = -(cr[1] * rel[0] + cr[4] * rel[1] + cr[7] * rel[2]);
        double z = cr[2] * rel[0] + cr[5] * rel[1] + cr[8] * rel[2];  // depth of the centre
        double r = rbound[g];
        if (z + r < 0 || z - r > far) continue;  // wholly behind the camera or beyond far
        if (z - r > 1e-9) {
          // x/z over the sphere lies between the extremes at z - r and z + r (monotone in z)
          double umin = fmin((x - r) / (z - r), (x - r) / (z + r)), umax = fmax((x + r) / (z - r), (x + r) / (z + r));
          double vmin = fmin((y - r) / (z - r), (y - r) / (z + r)), vmax = fmax((y + r) / (z - r), (y + r) / (z + r));
          c0 = clampi(floor(umin * focal + cx - 0.5), 0, width - 1);
          c1 = clampi(ceil(umax * focal + cx - 0.5), 0, width - 1);
          r0 = clampi(floor(cy - 0.5 - vmax * focal), 0, height - 1);
          r1 = clampi(ceil(cy - 0.5 - vmin * focal), 0, height - 1);
        }
      }
      rect_t rect = {r0, r1, c0, c1, width, cx, cy, inv_focal, zfloor, id};
      switch (types[g]) {  // one specialised pixel loop per geom type
        case PLANE: draw(PLANE, &rect, o, M, gr, size, zbuf, ids, nrm); break;
        case SPHERE: draw(SPHERE, &rect, o, M, gr, size, zbuf, ids, nrm); break;
        case CAPSULE: draw(CAPSULE, &rect, o, M, gr, size, zbuf, ids, nrm); break;
        case ELLIPSOID: draw(ELLIPSOID, &rect, o, M, gr, size, zbuf, ids, nrm); break;
        case CYLINDER: draw(CYLINDER, &rect, o, M, gr, size, zbuf, ids, nrm); break;
        default: draw(BOX, &rect, o, M, gr, size, zbuf, ids, nrm); break;
      }
    }
    for (int64_t p = 0; p < npix; p++) {  // a nearest surface nearer than `near` is clipped away
      if (zbuf[p] < near) {
        zbuf[p] = (float)far, ids[p] = -1;
        if (nrm) nrm[3 * p] = nrm[3 * p + 1] = nrm[3 * p + 2] = 0;
      }
    }
    if (shading && nrm) shade_env(shading, e, npix, width, focal, ngeom_all, cp, cr, zbuf, ids, nrm);
  }
}

static void* worker(void* arg) {
  job_t* job = (job_t*)arg;
  for (;;) {
    int64_t e = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
    if (e >= job->nenv) return NULL;
    render_env(job, e);
  }
}

void canter_raycast(int64_t nenv, int width, int height, const double* focals, int64_t focal_stride, double near, double far,
                    const double* cam_pos, const double* cam_mat, int64_t cam_stride_pos, int64_t cam_stride_mat,
                    const double* geom_pos, const double* geom_mat, int ngeom_all, const double* geom_size,
                    int64_t size_stride, int ngeom, const int* geoms, const int* types, const double* rbound,
                    float* depth, int32_t* seg, float* normal, const shade_t* shading, int nthread) {
  job_t job = {nenv, width, height, focals, focal_stride, near, far, cam_pos, cam_mat, cam_stride_pos,
               cam_stride_mat, geom_pos, geom_mat, ngeom_all, geom_size, size_stride, ngeom, geoms, types,
               rbound, depth, seg, normal, shading, 0};
  // plain threads that exit when the envs run out (no OpenMP: its idle workers spin at the end of a
  // parallel region and take the CPU the physics and other processes need)
  pthread_t threads[64];
  int started = 0;
  for (int i = 1; i < nthread && i < 64 && i < nenv; i++)
    if (pthread_create(&threads[started], NULL, worker, &job) == 0) started++;
  worker(&job);
  for (int i = 0; i < started; i++) pthread_join(threads[i], NULL);
}
