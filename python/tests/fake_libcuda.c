// A fake CUDA driver library for the runtime's CPU-only unit tests.
//
// It exports the driver entry points kgraph's ctypes binding uses, with the
// real signatures, backed by host memory: device pointers are malloc'ed host
// addresses, copies are memcpy, and cuLaunchKernel runs a few known "kernels"
// on the host (so a plan can be executed end to end without a GPU) and logs
// every launch (name, grid, block, shared bytes, stream, parameter values).
// fake_hang never returns and fake_crash aborts the process (for the
// tuner's watchdog).
//
// Streams, CUDA graphs and events are simulated too: a launch on a stream
// that is capturing is recorded (its parameter values copied, as the real
// driver does) instead of run, cuGraphLaunch runs the recorded launches, and
// events read a fake clock that every executed launch advances by
// 1 + grid-size microseconds (so kernel times are known to the tests).
//
// Knobs (read at call time): FAKE_CUDA_INIT_RC (cuInit's result),
// FAKE_CUDA_DEVICES (device count), FAKE_CUDA_NAME (device name, default
// "Fake GPU <n>"), FAKE_CUDA_CC (compute capability "major.minor", default
// "9.0"), FAKE_CUDA_ANY_KERNEL (set: launches of other kernels are logged,
// not run, instead of failing), FAKE_CUDA_TRACE (a file every executed launch
// appends "name gx gy gz" to: what a fake profiler reads).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;

static const char *errorName(int rc) {
  switch (rc) {
  case 0: return "CUDA_SUCCESS";
  case 1: return "CUDA_ERROR_INVALID_VALUE";
  case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
  case 100: return "CUDA_ERROR_NO_DEVICE";
  case 101: return "CUDA_ERROR_INVALID_DEVICE";
  case 218: return "CUDA_ERROR_INVALID_PTX";
  case 500: return "CUDA_ERROR_NOT_FOUND";
  case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  default: return NULL;
  }
}

CUresult cuGetErrorName(int rc, const char **out) {
  const char *n = errorName(rc);
  if (!n) return 1;
  *out = n;
  return 0;
}

CUresult cuGetErrorString(int rc, const char **out) {
  const char *n = errorName(rc);
  if (!n) return 1;
  *out = rc == 100 ? "no CUDA-capable device is detected"
                   : "fake driver error";
  return 0;
}

static int envInt(const char *name, int dflt) {
  const char *v = getenv(name);
  return v ? atoi(v) : dflt;
}

CUresult cuInit(unsigned flags) { return flags ? 1 : envInt("FAKE_CUDA_INIT_RC", 0); }

CUresult cuDeviceGetCount(int *n) {
  *n = envInt("FAKE_CUDA_DEVICES", 1);
  return 0;
}

CUresult cuDeviceGet(int *dev, int ordinal) {
  if (ordinal < 0 || ordinal >= envInt("FAKE_CUDA_DEVICES", 1)) return 101;
  *dev = ordinal;
  return 0;
}

CUresult cuDeviceGetName(char *name, int len, int dev) {
  const char *fixed = getenv("FAKE_CUDA_NAME");
  if (fixed)
    snprintf(name, len, "%s", fixed);
  else
    snprintf(name, len, "Fake GPU %d", dev);
  return 0;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  *ctx = (void *)(uintptr_t)(0x1000 + dev);
  return 0;
}

static void *currentCtx;
CUresult cuCtxSetCurrent(void *ctx) {
  currentCtx = ctx;
  return 0;
}

// --- modules -------------------------------------------------------------------

static char *moduleImage; // one module at a time is enough for the tests
static int modulesLoaded;

CUresult cuModuleLoadData(void **module, const void *image) {
  if (!currentCtx) return 1;
  if (!strstr((const char *)image, ".entry")) return 218;
  free(moduleImage);
  moduleImage = strdup((const char *)image);
  ++modulesLoaded;
  *module = moduleImage;
  return 0;
}

#define MAX_FUNCS 64
static char funcNames[MAX_FUNCS][128];
static int funcSmemLimit[MAX_FUNCS];
static int numFuncs;

CUresult cuModuleGetFunction(void **fn, void *module, const char *name) {
  char pattern[160];
  snprintf(pattern, sizeof pattern, ".entry %s(", name);
  if (module != moduleImage || !strstr(moduleImage, pattern)) return 500;
  if (numFuncs == MAX_FUNCS) return 2;
  snprintf(funcNames[numFuncs], 128, "%s", name);
  funcSmemLimit[numFuncs] = 48 * 1024;
  *fn = (void *)(uintptr_t)(numFuncs + 1);
  ++numFuncs;
  return 0;
}

CUresult cuFuncSetAttribute(void *fn, int attr, int value) {
  int i = (int)(uintptr_t)fn - 1;
  if (i < 0 || i >= numFuncs || attr != 8) return 1;
  funcSmemLimit[i] = value;
  return 0;
}

// --- launches ------------------------------------------------------------------

#define MAX_LAUNCHES 64
static char launchLog[MAX_LAUNCHES][512];
static int numLaunches;

static uint64_t u64(void **params, int i) { return *(uint64_t *)params[i]; }
static int32_t i32(void **params, int i) { return *(int32_t *)params[i]; }

/// Bytes of each parameter of the known kernels (what a capture copies).
static int paramSizes(const char *name, int sizes[8]) {
  if (!strcmp(name, "fake_add_f32")) {
    sizes[0] = sizes[1] = sizes[2] = 8, sizes[3] = 4;
    return 4;
  }
  if (!strcmp(name, "fake_neg_f32")) {
    sizes[0] = sizes[1] = sizes[2] = 8, sizes[3] = 4;
    return 4;
  }
  if (!strcmp(name, "fake_nop")) {
    sizes[0] = 8;
    return 1;
  }
  if (!strcmp(name, "fake_hang") || !strcmp(name, "fake_crash")) {
    sizes[0] = sizes[1] = sizes[2] = 8, sizes[3] = 4;
    return 4;
  }
  return -1;
}

/// The fake clock (microseconds) events read; executed launches advance it.
static double fakeClockUs;

/// Runs kernel `f` on the host and logs it; `graph` marks a replay.
static CUresult runKernel(int f, unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz, unsigned smem,
                          void *stream, void **params, int graph) {
  if (f < 0 || f >= numFuncs) return 1;
  if ((int)smem > funcSmemLimit[f]) return 701;
  const char *name = funcNames[f];
  char args[256] = "";
  if (!strcmp(name, "fake_add_f32")) {
    // (a, b, c, i32 n): c = a + b
    float *a = (float *)u64(params, 0), *b = (float *)u64(params, 1);
    float *c = (float *)u64(params, 2);
    int n = i32(params, 3);
    for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
    snprintf(args, sizeof args, "%#llx,%#llx,%#llx,%d",
             (unsigned long long)u64(params, 0),
             (unsigned long long)u64(params, 1),
             (unsigned long long)u64(params, 2), n);
  } else if (!strcmp(name, "fake_neg_f32")) {
    // (x, y, i64 n, f32 scale): y = -x * scale
    float *x = (float *)u64(params, 0), *y = (float *)u64(params, 1);
    long long n = *(int64_t *)params[2];
    float scale = *(float *)params[3];
    for (long long i = 0; i < n; ++i) y[i] = -x[i] * scale;
    snprintf(args, sizeof args, "%#llx,%#llx,%lld,%g",
             (unsigned long long)u64(params, 0),
             (unsigned long long)u64(params, 1), n, scale);
  } else if (!strcmp(name, "fake_nop")) {
    // (p): touches nothing
    snprintf(args, sizeof args, "%#llx", (unsigned long long)u64(params, 0));
  } else if (!strcmp(name, "fake_hang")) {
    // (a, b, c, i32 n): never finishes (a kernel stuck on a barrier)
    for (;;)
      sleep(1);
  } else if (!strcmp(name, "fake_crash")) {
    // (a, b, c, i32 n): takes the process down (a driver that aborts)
    abort();
  } else if (getenv("FAKE_CUDA_ANY_KERNEL")) {
    // Any other kernel of the loaded module, where the caller asked for it
    // (a real plan's launches, e.g. test/Embedding/python-package.test):
    // logged, not run, so its outputs keep what they held.
    snprintf(args, sizeof args, "not run");
  } else {
    return 1;
  }
  if (numLaunches < MAX_LAUNCHES)
    snprintf(launchLog[numLaunches], 512,
             "%s%s grid=%u,%u,%u block=%u,%u,%u smem=%u stream=%#llx args=%s",
             graph ? "graph:" : "", name, gx, gy, gz, bx, by, bz, smem,
             (unsigned long long)(uintptr_t)stream, args);
  ++numLaunches;
  fakeClockUs += 1.0 + (double)gx * gy * gz;
  const char *trace = getenv("FAKE_CUDA_TRACE");
  if (trace) {
    FILE *f = fopen(trace, "a");
    if (f) {
      fprintf(f, "%s %u %u %u\n", name, gx, gy, gz);
      fclose(f);
    }
  }
  return 0;
}

// --- streams, graphs and events ---------------------------------------------------

/// One launch recorded by a capture, with copies of its parameter values.
typedef struct {
  int f;
  unsigned dims[6], smem;
  int numParams;
  unsigned char values[8][8];
  void *params[8];
} Node;

#define MAX_NODES 64
typedef struct {
  Node nodes[MAX_NODES];
  int numNodes;
  int instantiated;
} Graph;

#define MAX_STREAMS 16
static int streamLive[MAX_STREAMS];
static Graph *streamCapture[MAX_STREAMS]; // the graph a stream records into
static int liveStreams, liveGraphs, liveExecs, liveEvents, graphLaunches;

/// The index of a stream made by cuStreamCreate, -1 for the null stream and
/// anything else.
static int streamIndex(void *stream) {
  uintptr_t s = (uintptr_t)stream;
  if (s < 0x5000 || s >= 0x5000 + MAX_STREAMS) return -1;
  return streamLive[s - 0x5000] ? (int)(s - 0x5000) : -1;
}

CUresult cuStreamCreate(void **stream, unsigned flags) {
  for (int i = 0; i < MAX_STREAMS; ++i)
    if (!streamLive[i]) {
      streamLive[i] = 1;
      streamCapture[i] = NULL;
      *stream = (void *)(uintptr_t)(0x5000 + i);
      ++liveStreams;
      return 0;
    }
  return 2;
}

CUresult cuStreamDestroy_v2(void *stream) {
  int i = streamIndex(stream);
  if (i < 0 || streamCapture[i]) return 1;
  streamLive[i] = 0;
  --liveStreams;
  return 0;
}

CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  int i = streamIndex(stream); // the null stream cannot be captured
  if (i < 0 || streamCapture[i] || mode < 0 || mode > 2) return 1;
  streamCapture[i] = calloc(1, sizeof(Graph));
  return streamCapture[i] ? 0 : 2;
}

CUresult cuStreamEndCapture(void *stream, void **graph) {
  int i = streamIndex(stream);
  if (i < 0 || !streamCapture[i]) return 1;
  *graph = streamCapture[i];
  streamCapture[i] = NULL;
  ++liveGraphs;
  return 0;
}

CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                     unsigned long long flags) {
  if (!graph || flags) return 1;
  Graph *copy = malloc(sizeof(Graph));
  if (!copy) return 2;
  memcpy(copy, graph, sizeof(Graph));
  for (int n = 0; n < copy->numNodes; ++n)
    for (int p = 0; p < copy->nodes[n].numParams; ++p)
      copy->nodes[n].params[p] = copy->nodes[n].values[p];
  copy->instantiated = 1;
  *exec = copy;
  ++liveExecs;
  return 0;
}

CUresult cuGraphLaunch(void *exec, void *stream) {
  Graph *g = exec;
  if (!g || !g->instantiated) return 1;
  ++graphLaunches;
  for (int n = 0; n < g->numNodes; ++n) {
    Node *node = &g->nodes[n];
    CUresult rc = runKernel(node->f, node->dims[0], node->dims[1],
                            node->dims[2], node->dims[3], node->dims[4],
                            node->dims[5], node->smem, stream, node->params, 1);
    if (rc) return rc;
  }
  return 0;
}

CUresult cuGraphExecDestroy(void *exec) {
  Graph *g = exec;
  if (!g || !g->instantiated) return 1;
  free(g);
  --liveExecs;
  return 0;
}

CUresult cuGraphDestroy(void *graph) {
  if (!graph) return 1;
  free(graph);
  --liveGraphs;
  return 0;
}

CUresult cuEventCreate(void **event, unsigned flags) {
  double *e = calloc(1, sizeof(double));
  if (!e) return 2;
  *e = -1;
  *event = e;
  ++liveEvents;
  return 0;
}

CUresult cuEventRecord(void *event, void *stream) {
  int i = streamIndex(stream);
  if (!event || (i >= 0 && streamCapture[i])) return 1;
  *(double *)event = fakeClockUs;
  return 0;
}

CUresult cuEventSynchronize(void *event) { return event ? 0 : 1; }

CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  if (!start || !end || *(double *)start < 0 || *(double *)end < 0) return 1;
  *ms = (float)((*(double *)end - *(double *)start) / 1000.0);
  return 0;
}

CUresult cuEventDestroy_v2(void *event) {
  if (!event) return 1;
  free(event);
  --liveEvents;
  return 0;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  int f = (int)(uintptr_t)fn - 1;
  if (f < 0 || f >= numFuncs || extra) return 1;
  int s = streamIndex(stream);
  if (s >= 0 && streamCapture[s]) {
    // Recorded, not run: the parameter values are copied now.
    Graph *g = streamCapture[s];
    int sizes[8];
    int n = paramSizes(funcNames[f], sizes);
    if (n < 0 || g->numNodes == MAX_NODES) return 1;
    Node *node = &g->nodes[g->numNodes++];
    node->f = f;
    unsigned dims[6] = {gx, gy, gz, bx, by, bz};
    memcpy(node->dims, dims, sizeof dims);
    node->smem = smem;
    node->numParams = n;
    for (int p = 0; p < n; ++p) {
      memset(node->values[p], 0, 8);
      memcpy(node->values[p], params[p], sizes[p]);
    }
    return 0;
  }
  return runKernel(f, gx, gy, gz, bx, by, bz, smem, stream, params, 0);
}

CUresult cuStreamSynchronize(void *stream) {
  int i = streamIndex(stream);
  return i >= 0 && streamCapture[i] ? 1 : 0;
}

CUresult cuDeviceGetAttribute(int *value, int attrib, int dev) {
  // 75/76: compute capability major/minor (FAKE_CUDA_CC, default "9.0").
  const char *cc = getenv("FAKE_CUDA_CC");
  int major = 9, minor = 0;
  if (cc && sscanf(cc, "%d.%d", &major, &minor) != 2) return 1;
  if (attrib == 75) *value = major;
  else if (attrib == 76) *value = minor;
  else return 1;
  return 0;
}

// --- memory --------------------------------------------------------------------

static int liveAllocs;

CUresult cuMemAlloc_v2(uint64_t *ptr, size_t n) {
  if (!n) return 1;
  void *p = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!p) return 2;
  memset(p, 0xCD, n);
  *ptr = (uint64_t)(uintptr_t)p;
  ++liveAllocs;
  return 0;
}

CUresult cuMemFree_v2(uint64_t ptr) {
  free((void *)(uintptr_t)ptr);
  --liveAllocs;
  return 0;
}

CUresult cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t n) {
  memcpy((void *)(uintptr_t)dst, src, n);
  return 0;
}

CUresult cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n) {
  memcpy(dst, (const void *)(uintptr_t)src, n);
  return 0;
}

CUresult cuMemsetD8_v2(uint64_t dst, unsigned char v, size_t n) {
  memset((void *)(uintptr_t)dst, v, n);
  return 0;
}

// --- tensor maps -----------------------------------------------------------------

#define MAX_MAPS 64
static char mapLog[MAX_MAPS][512];
static int numMaps;

// Appends " name=v0,v1,..." (n values) to buf at *at.
static void logU64s(char *buf, int *at, const char *name, const uint64_t *v,
                    uint32_t n) {
  *at += snprintf(buf + *at, 512 - *at, " %s=", name);
  for (uint32_t i = 0; i < n; ++i)
    *at += snprintf(buf + *at, 512 - *at, "%s%llu", i ? "," : "",
                    (unsigned long long)v[i]);
}
static void logU32s(char *buf, int *at, const char *name, const uint32_t *v,
                    uint32_t n) {
  *at += snprintf(buf + *at, 512 - *at, " %s=", name);
  for (uint32_t i = 0; i < n; ++i)
    *at += snprintf(buf + *at, 512 - *at, "%s%u", i ? "," : "", v[i]);
}
static void logInts(char *buf, int *at, const char *name, const int *v,
                    uint32_t n) {
  *at += snprintf(buf + *at, 512 - *at, " %s=", name);
  for (uint32_t i = 0; i < n; ++i)
    *at += snprintf(buf + *at, 512 - *at, "%s%d", i ? "," : "", v[i]);
}

// Keeps the log line of one encoded map and writes the fake "map": the
// global address followed by the dims (enough for a test to see which map a
// kernel received).
static void recordMap(const char *buf, void *map, void *addr,
                      const uint64_t *dims, uint32_t rank) {
  if (numMaps < MAX_MAPS)
    snprintf(mapLog[numMaps], 512, "%s", buf);
  ++numMaps;
  uint64_t *words = (uint64_t *)map;
  memset(words, 0, 128);
  words[0] = (uint64_t)(uintptr_t)addr;
  for (uint32_t i = 0; i < rank; ++i) words[1 + i] = dims[i];
}

// Logs every argument.
CUresult cuTensorMapEncodeTiled(void *map, int dtype, uint32_t rank,
                                void *addr, const uint64_t *dims,
                                const uint64_t *strides, const uint32_t *box,
                                const uint32_t *estrides, int interleave,
                                int swizzle, int l2, int oob) {
  if (!map || rank < 1 || rank > 5 || ((uintptr_t)addr % 16)) return 1;
  char buf[512];
  int n = snprintf(buf, sizeof buf, "dtype=%d rank=%u addr=%#llx", dtype,
                   rank, (unsigned long long)(uintptr_t)addr);
  logU64s(buf, &n, "dims", dims, rank);
  logU64s(buf, &n, "strides", strides, rank - 1);
  logU32s(buf, &n, "box", box, rank);
  logU32s(buf, &n, "estrides", estrides, rank);
  snprintf(buf + n, sizeof buf - n, " interleave=%d swizzle=%d l2=%d oob=%d",
           interleave, swizzle, l2, oob);
  recordMap(buf, map, addr, dims, rank);
  return 0;
}

// Logs every argument, prefixed "im2col" (corners: rank - 2 each, the
// channels and pixels per load); the "map" is as cuTensorMapEncodeTiled's.
CUresult cuTensorMapEncodeIm2col(void *map, int dtype, uint32_t rank,
                                 void *addr, const uint64_t *dims,
                                 const uint64_t *strides, const int *lower,
                                 const int *upper, uint32_t channels,
                                 uint32_t pixels, const uint32_t *estrides,
                                 int interleave, int swizzle, int l2,
                                 int oob) {
  if (!map || rank < 3 || rank > 5 || ((uintptr_t)addr % 16)) return 1;
  char buf[512];
  int n = snprintf(buf, sizeof buf, "im2col dtype=%d rank=%u addr=%#llx",
                   dtype, rank, (unsigned long long)(uintptr_t)addr);
  logU64s(buf, &n, "dims", dims, rank);
  logU64s(buf, &n, "strides", strides, rank - 1);
  logInts(buf, &n, "lower", lower, rank - 2);
  logInts(buf, &n, "upper", upper, rank - 2);
  n += snprintf(buf + n, sizeof buf - n, " channels=%u pixels=%u", channels,
                pixels);
  logU32s(buf, &n, "estrides", estrides, rank);
  snprintf(buf + n, sizeof buf - n, " interleave=%d swizzle=%d l2=%d oob=%d",
           interleave, swizzle, l2, oob);
  recordMap(buf, map, addr, dims, rank);
  return 0;
}

// --- inspection for the tests ----------------------------------------------------

int fake_num_maps(void) { return numMaps; }
const char *fake_map(int i) { return i < numMaps ? mapLog[i] : ""; }

int fake_live_allocs(void) { return liveAllocs; }
int fake_modules_loaded(void) { return modulesLoaded; }
int fake_num_launches(void) { return numLaunches; }
const char *fake_launch(int i) { return i < numLaunches ? launchLog[i] : ""; }
int fake_smem_limit(const char *name) {
  for (int i = numFuncs - 1; i >= 0; --i)
    if (!strcmp(funcNames[i], name)) return funcSmemLimit[i];
  return -1;
}
int fake_live_streams(void) { return liveStreams; }
int fake_live_graphs(void) { return liveGraphs + liveExecs; }
int fake_live_events(void) { return liveEvents; }
int fake_graph_launches(void) { return graphLaunches; }
// Each test starts with no launches, maps or function handles (handles of
// earlier tests' Programs would otherwise fill the table, MAX_FUNCS).
void fake_reset(void) { numLaunches = 0; numMaps = 0; graphLaunches = 0; numFuncs = 0; }
