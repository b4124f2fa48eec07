//===- OneDnn.cpp - oneDNN matmul and convolution, loaded at run time -----===//
#include "OneDnn.h"
#include "ExternalGemm.h"
#include "llvm/Support/FormatVariadic.h"
#include <tuple>

using namespace qimeng;

#if __has_include(<oneapi/dnnl/dnnl.h>)
#include <oneapi/dnnl/dnnl.h>

namespace {

/// The C API functions used, resolved from the loaded library.
struct Api {
#define QM_DNNL_FN(name) decltype(&::name) name = nullptr;
#define QM_DNNL_FNS(X)                                                         \
  X(dnnl_engine_create)                                                        \
  X(dnnl_engine_destroy)                                                       \
  X(dnnl_stream_create)                                                        \
  X(dnnl_stream_destroy)                                                       \
  X(dnnl_stream_wait)                                                          \
  X(dnnl_memory_desc_init_by_tag)                                              \
  X(dnnl_memory_desc_init_by_strides)                                          \
  X(dnnl_matmul_desc_init)                                                     \
  X(dnnl_memory_desc_equal)                                                    \
  X(dnnl_dilated_convolution_forward_desc_init)                                \
  X(dnnl_primitive_attr_create)                                                \
  X(dnnl_primitive_attr_destroy)                                               \
  X(dnnl_primitive_attr_set_post_ops)                                          \
  X(dnnl_post_ops_create)                                                      \
  X(dnnl_post_ops_destroy)                                                     \
  X(dnnl_post_ops_append_sum)                                                  \
  X(dnnl_primitive_desc_create)                                                \
  X(dnnl_primitive_desc_destroy)                                               \
  X(dnnl_primitive_desc_query)                                                 \
  X(dnnl_primitive_desc_query_md)                                              \
  X(dnnl_reorder_primitive_desc_create)                                        \
  X(dnnl_primitive_create)                                                     \
  X(dnnl_primitive_destroy)                                                    \
  X(dnnl_primitive_execute)                                                    \
  X(dnnl_memory_create)                                                        \
  X(dnnl_memory_destroy)                                                       \
  X(dnnl_memory_set_data_handle)                                               \
  X(dnnl_memory_get_memory_desc)                                               \
  X(dnnl_version)
  QM_DNNL_FNS(QM_DNNL_FN)
#undef QM_DNNL_FN
};

llvm::Error check(dnnl_status_t status, const char *what) {
  if (status == dnnl_success)
    return llvm::Error::success();
  return llvm::createStringError(
      llvm::formatv("oneDNN {0} failed with status {1}", what, int(status))
          .str());
}

/// oneDNN's types for ours: bf16 x bf16 -> f32 is bf16 source and weights
/// into an f32 destination (oneDNN accumulates in f32); 8-bit is an s8 or
/// u8 source, s8 weights, an s32 destination.
struct Types {
  dnnl_data_type_t src = dnnl_f32, wei = dnnl_f32, dst = dnnl_f32;
};

Types typesOf(GemmPrecision precision) {
  switch (precision) {
  case GemmPrecision::Bf16:
    return {dnnl_bf16, dnnl_bf16, dnnl_f32};
  case GemmPrecision::S8S8:
    return {dnnl_s8, dnnl_s8, dnnl_s32};
  case GemmPrecision::U8S8:
    return {dnnl_u8, dnnl_s8, dnnl_s32};
  case GemmPrecision::F16:
    return {dnnl_f16, dnnl_f16, dnnl_f32};
  case GemmPrecision::F32:
    break;
  }
  return {};
}

/// The primitive descriptor of `opDesc` (a convolution or matmul
/// descriptor) with a sum post-op: dst += op, our kernels' semantics.
llvm::Error createAccumulating(const Api &api, dnnl_engine_t engine,
                               const void *opDesc, dnnl_primitive_desc_t *pd,
                               const char *what) {
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_post_ops_t postOps = nullptr;
  if (auto e = check(api.dnnl_primitive_attr_create(&attr), "attr"))
    return e;
  if (auto e = check(api.dnnl_post_ops_create(&postOps), "post-ops")) {
    api.dnnl_primitive_attr_destroy(attr);
    return e;
  }
  llvm::Error e = check(api.dnnl_post_ops_append_sum(postOps, 1.0f), "sum");
  if (!e)
    e = check(api.dnnl_primitive_attr_set_post_ops(attr, postOps),
              "set post-ops");
  if (!e)
    e = check(api.dnnl_primitive_desc_create(
                  pd, static_cast<const_dnnl_op_desc_t>(opDesc), attr, engine,
                  nullptr),
              what);
  api.dnnl_post_ops_destroy(postOps);
  api.dnnl_primitive_attr_destroy(attr);
  return e;
}

/// The implementation oneDNN chose for `pd`, "" when it does not say.
std::string implementationOf(const Api &api, const_dnnl_primitive_desc_t pd) {
  const char *impl = nullptr;
  if (api.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) ==
          dnnl_success &&
      impl)
    return impl;
  return "";
}

/// Runs `prim` on `src` and `weights` into `dst` and waits for it.
llvm::Error executeAndWait(const Api &api, dnnl_stream_t stream,
                           dnnl_primitive_t prim, dnnl_memory_t src,
                           dnnl_memory_t weights, dnnl_memory_t dst,
                           const char *what) {
  dnnl_exec_arg_t args[] = {
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (auto e = check(api.dnnl_primitive_execute(prim, stream, 3, args), what))
    return e;
  return check(api.dnnl_stream_wait(stream), "stream wait");
}

/// What every primitive here holds: the library's functions, its engine and
/// stream, the primitive descriptor (destroyed last) and the implementation
/// oneDNN chose.
struct PrimitiveState {
  PrimitiveState(const Api &api, dnnl_engine_t engine, dnnl_stream_t stream)
      : api(api), engine(engine), stream(stream) {}
  PrimitiveState(const PrimitiveState &) = delete;
  PrimitiveState &operator=(const PrimitiveState &) = delete;
  ~PrimitiveState() {
    if (pd)
      api.dnnl_primitive_desc_destroy(pd);
  }

  const Api &api;
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_desc_t pd = nullptr;
  std::string implName;
};

class MatmulPrimitive final : public OneDnnMatmulPrimitive,
                              private PrimitiveState {
public:
  MatmulPrimitive(const Api &api, dnnl_engine_t engine, dnnl_stream_t stream)
      : PrimitiveState(api, engine, stream) {}
  ~MatmulPrimitive() override {
    for (dnnl_memory_t m : {src, wei, dst})
      if (m)
        api.dnnl_memory_destroy(m);
    if (matmul)
      api.dnnl_primitive_destroy(matmul);
  }

  llvm::Error init(const GemmDesc &d) {
    // Row-major operands as they lie: A(m,k) at m*lda + k, or k*lda + m
    // when transposed; likewise B; C(m,n) at m*ldc + n.
    dnnl_memory_desc_t srcMd, weiMd, dstMd;
    dnnl_dims_t srcDims = {d.m, d.k}, weiDims = {d.k, d.n},
                dstDims = {d.m, d.n};
    dnnl_dims_t srcStrides = {d.transA ? 1 : d.lda, d.transA ? d.lda : 1};
    dnnl_dims_t weiStrides = {d.transB ? 1 : d.ldb, d.transB ? d.ldb : 1};
    dnnl_dims_t dstStrides = {d.ldc, 1};
    const Types t = typesOf(d.precision);
    for (auto [md, dims, strides, type, what] :
         {std::tuple{&srcMd, srcDims, srcStrides, t.src, "src memory desc"},
          {&weiMd, weiDims, weiStrides, t.wei, "weights memory desc"},
          {&dstMd, dstDims, dstStrides, t.dst, "dst memory desc"}})
      if (auto e = check(
              api.dnnl_memory_desc_init_by_strides(md, 2, dims, type, strides),
              what))
        return e;
    dnnl_matmul_desc_t md;
    if (auto e = check(
            api.dnnl_matmul_desc_init(&md, &srcMd, &weiMd, nullptr, &dstMd),
            "matmul desc"))
      return e;
    if (auto e =
            createAccumulating(api, engine, &md, &pd, "matmul primitive desc"))
      return e;
    implName = implementationOf(api, pd);
    if (auto e = check(api.dnnl_primitive_create(&matmul, pd), "matmul"))
      return e;
    for (auto [mem, mdp] :
         {std::pair{&src, &srcMd}, {&wei, &weiMd}, {&dst, &dstMd}})
      if (auto e =
              check(api.dnnl_memory_create(mem, mdp, engine, DNNL_MEMORY_NONE),
                    "memory"))
        return e;
    return llvm::Error::success();
  }

  llvm::Error run(const float *a, const float *b, float *c) override {
    for (auto [mem, ptr] : {std::pair{src, const_cast<float *>(a)},
                            {wei, const_cast<float *>(b)},
                            {dst, c}})
      if (auto e = check(api.dnnl_memory_set_data_handle(mem, ptr), "handle"))
        return e;
    return executeAndWait(api, stream, matmul, src, wei, dst, "matmul");
  }

  std::string implementation() const override { return implName; }

private:
  dnnl_primitive_t matmul = nullptr;
  dnnl_memory_t src = nullptr, wei = nullptr, dst = nullptr;
};

/// A reorder of one memory into another, created once.
struct Reorder {
  dnnl_primitive_t prim = nullptr;
  dnnl_memory_t from = nullptr, to = nullptr;
};

class ConvPrimitive final : public OneDnnConvPrimitive, private PrimitiveState {
public:
  ConvPrimitive(const Api &api, dnnl_engine_t engine, dnnl_stream_t stream)
      : PrimitiveState(api, engine, stream) {}
  ~ConvPrimitive() override {
    for (dnnl_memory_t m : {src, wei, weiUser, dst, srcUser, dstUser})
      if (m)
        api.dnnl_memory_destroy(m);
    for (dnnl_primitive_t p :
         {conv, weiReorder.prim, srcIn.prim, dstIn.prim, dstOut.prim})
      if (p)
        api.dnnl_primitive_destroy(p);
  }

  /// nhwc: the source and destination as the user's tensors are, which its
  /// jit kernels take. nchw: oneDNN's plain-nchw kernels are im2col + GEMM
  /// (bf16) or reference code (int8), so the primitive chooses the
  /// activations' layout too (format any), and each call reorders the
  /// user's nchw source into it, the destination in (the sum post-op reads
  /// it) and back: what a framework holding nchw tensors pays.
  llvm::Error init(const ConvDesc &d) {
    dnnl_memory_desc_t srcUserMd, weiUserMd, weiAnyMd, dstUserMd, srcMd, dstMd;
    dnnl_dims_t srcDims = {d.n, d.c, d.h, d.w};
    dnnl_dims_t weiDims = {d.f, d.c, d.kh, d.kw};
    dnnl_dims_t dstDims = {d.n, d.f, d.oh(), d.ow()};
    // The types of ours, as for the matmul (MatmulPrimitive::init).
    const Types t = typesOf(d.precision);
    const bool nhwc = d.isNhwc();
    const dnnl_format_tag_t act = nhwc ? dnnl_nhwc : dnnl_nchw;
    for (auto [md, dims, type, tag] :
         {std::tuple<dnnl_memory_desc_t *, dnnl_dim_t *, dnnl_data_type_t,
                     dnnl_format_tag_t>{&srcUserMd, srcDims, t.src, act},
          {&srcMd, srcDims, t.src, nhwc ? act : dnnl_format_tag_any},
          {&weiUserMd, weiDims, t.wei, nhwc ? dnnl_hwio : dnnl_oihw},
          {&weiAnyMd, weiDims, t.wei, dnnl_format_tag_any},
          {&dstUserMd, dstDims, t.dst, act},
          {&dstMd, dstDims, t.dst, nhwc ? act : dnnl_format_tag_any}})
      if (auto e =
              check(api.dnnl_memory_desc_init_by_tag(md, 4, dims, type, tag),
                    "memory desc"))
        return e;
    dnnl_dims_t strides = {d.strideH, d.strideW};
    dnnl_dims_t dilates = {d.dilationH - 1, d.dilationW - 1};
    dnnl_dims_t pad = {0, 0};
    dnnl_convolution_desc_t cd;
    if (auto e = check(api.dnnl_dilated_convolution_forward_desc_init(
                           &cd, dnnl_forward_inference, dnnl_convolution_auto,
                           &srcMd, &weiAnyMd, nullptr, &dstMd, strides, dilates,
                           pad, pad),
                       "convolution desc"))
      return e;
    if (auto e = createAccumulating(api, engine, &cd, &pd,
                                    "convolution primitive desc"))
      return e;
    if (auto e2 = check(api.dnnl_primitive_create(&conv, pd), "convolution"))
      return e2;
    auto chosen = [&](dnnl_query_t what) {
      return api.dnnl_primitive_desc_query_md(pd, what, 0);
    };
    const dnnl_memory_desc_t *weiMd = chosen(dnnl_query_weights_md);
    const dnnl_memory_desc_t *srcConvMd = chosen(dnnl_query_src_md);
    const dnnl_memory_desc_t *dstConvMd = chosen(dnnl_query_dst_md);
    implName = implementationOf(api, pd);
    const bool srcReordered =
        !api.dnnl_memory_desc_equal(srcConvMd, &srcUserMd);
    const bool dstReordered =
        !api.dnnl_memory_desc_equal(dstConvMd, &dstUserMd);
    if (srcReordered || dstReordered)
      implName += " (activations reordered from and to nchw at each call)";
    // Memories: the user's (handles set at each call) and, where the
    // primitive's layout differs, its own (allocated here).
    for (auto [mem, md, own] :
         {std::tuple<dnnl_memory_t *, const dnnl_memory_desc_t *, bool>{
              &srcUser, &srcUserMd, false},
          {&src, srcConvMd, srcReordered},
          {&wei, weiMd, true},
          {&weiUser, &weiUserMd, false},
          {&dstUser, &dstUserMd, false},
          {&dst, dstConvMd, dstReordered}})
      if (auto e3 = check(api.dnnl_memory_create(mem, md, engine,
                                                 own ? DNNL_MEMORY_ALLOCATE
                                                     : DNNL_MEMORY_NONE),
                          "memory"))
        return e3;
    weiReorder = {nullptr, weiUser, wei};
    if (srcReordered)
      srcIn = {nullptr, srcUser, src};
    if (dstReordered) {
      dstIn = {nullptr, dstUser, dst};
      dstOut = {nullptr, dst, dstUser};
    }
    for (Reorder *r : {&weiReorder, &srcIn, &dstIn, &dstOut}) {
      if (!r->from)
        continue;
      const dnnl_memory_desc_t *fromMd = nullptr, *toMd = nullptr;
      if (auto e4 = check(api.dnnl_memory_get_memory_desc(r->from, &fromMd),
                          "memory desc query"))
        return e4;
      if (auto e4 = check(api.dnnl_memory_get_memory_desc(r->to, &toMd),
                          "memory desc query"))
        return e4;
      dnnl_primitive_desc_t rpd = nullptr;
      if (auto e4 = check(api.dnnl_reorder_primitive_desc_create(
                              &rpd, fromMd, engine, toMd, engine, nullptr),
                          "reorder desc"))
        return e4;
      llvm::Error e5 =
          check(api.dnnl_primitive_create(&r->prim, rpd), "reorder");
      api.dnnl_primitive_desc_destroy(rpd);
      if (e5)
        return e5;
    }
    return llvm::Error::success();
  }

  llvm::Error setFilter(const float *filter) override {
    if (auto e = check(api.dnnl_memory_set_data_handle(
                           weiUser, const_cast<float *>(filter)),
                       "weights handle"))
      return e;
    if (auto e = reorder(weiReorder, "weights reorder"))
      return e;
    return check(api.dnnl_stream_wait(stream), "stream wait");
  }

  llvm::Error run(const float *in, float *out) override {
    if (auto e = check(
            api.dnnl_memory_set_data_handle(srcUser, const_cast<float *>(in)),
            "src handle"))
      return e;
    if (auto e =
            check(api.dnnl_memory_set_data_handle(dstUser, out), "dst handle"))
      return e;
    if (auto e = reorder(srcIn, "source reorder"))
      return e;
    if (auto e = reorder(dstIn, "destination reorder"))
      return e;
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, srcIn.prim ? src : srcUser},
                              {DNNL_ARG_WEIGHTS, wei},
                              {DNNL_ARG_DST, dstIn.prim ? dst : dstUser}};
    if (auto e = check(api.dnnl_primitive_execute(conv, stream, 3, args),
                       "convolution"))
      return e;
    if (auto e = reorder(dstOut, "destination reorder"))
      return e;
    return check(api.dnnl_stream_wait(stream), "stream wait");
  }

  std::string implementation() const override { return implName; }

private:
  llvm::Error reorder(const Reorder &r, const char *what) {
    if (!r.prim)
      return llvm::Error::success();
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, r.from}, {DNNL_ARG_TO, r.to}};
    return check(api.dnnl_primitive_execute(r.prim, stream, 2, args), what);
  }

  dnnl_primitive_t conv = nullptr;
  Reorder weiReorder, srcIn, dstIn, dstOut;
  dnnl_memory_t src = nullptr, wei = nullptr, weiUser = nullptr, dst = nullptr,
                srcUser = nullptr, dstUser = nullptr;
};

class Library final : public OneDnn {
public:
  Library(SharedLibrary lib, Api api, int threads)
      : lib(std::move(lib)), api(api), threads(threads) {}
  ~Library() override {
    if (stream)
      api.dnnl_stream_destroy(stream);
    if (engine)
      api.dnnl_engine_destroy(engine);
  }

  llvm::Error init() {
    if (auto e = check(api.dnnl_engine_create(&engine, dnnl_cpu, 0), "engine"))
      return e;
    return check(
        api.dnnl_stream_create(&stream, engine, dnnl_stream_default_flags),
        "stream");
  }

  std::string version() const override {
    const dnnl_version_t *v = api.dnnl_version();
    return v ? llvm::formatv("{0}.{1}.{2}", v->major, v->minor, v->patch).str()
             : "";
  }

  std::string describe() const override {
    return llvm::formatv("{0}, {1} thread(s) (its own OpenMP runtime)",
                         lib.path(), threads)
        .str();
  }

  llvm::Expected<std::unique_ptr<OneDnnConvPrimitive>>
  prepareConv(const ConvDesc &desc) override {
    if (desc.layout == ConvLayout::NhwcFhwc || !desc.inputIsDense())
      return llvm::createStringError(
          "the oneDNN column takes nhwc_hwcf or nchw_fchw with a dense "
          "input");
    auto p = std::make_unique<ConvPrimitive>(api, engine, stream);
    if (auto e = p->init(desc))
      return std::move(e);
    return std::unique_ptr<OneDnnConvPrimitive>(std::move(p));
  }

  llvm::Expected<std::unique_ptr<OneDnnMatmulPrimitive>>
  prepareMatmul(const GemmDesc &desc) override {
    auto p = std::make_unique<MatmulPrimitive>(api, engine, stream);
    if (auto e = p->init(desc))
      return std::move(e);
    return std::unique_ptr<OneDnnMatmulPrimitive>(std::move(p));
  }

private:
  SharedLibrary lib;
  Api api;
  int threads;
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
};

} // namespace

llvm::Expected<std::unique_ptr<OneDnn>> OneDnn::load(int threads) {
  static const char *const candidates[] = {"libdnnl.so.2", "libdnnl.so"};
  // Its OpenMP team outlives the calls: keep it mapped (as BLIS).
  auto lib = SharedLibrary::open(candidates, /*keepMapped=*/true);
  if (!lib)
    return lib.takeError();
  Api api;
#define QM_DNNL_RESOLVE(name)                                                  \
  api.name = lib->function<decltype(&::name)>(#name);                          \
  if (!api.name)                                                               \
    return llvm::createStringError(lib->path() + " has no " #name);
  QM_DNNL_FNS(QM_DNNL_RESOLVE)
#undef QM_DNNL_RESOLVE
  // libdnnl's OpenMP (GNU libgomp, loaded with it): its thread count.
  using SetThreads = void (*)(int);
  if (auto set = lib->function<SetThreads>("omp_set_num_threads"))
    set(threads);
  auto library = std::make_unique<Library>(std::move(*lib), api, threads);
  if (auto e = library->init())
    return std::move(e);
  return std::unique_ptr<OneDnn>(std::move(library));
}

#else

llvm::Expected<std::unique_ptr<OneDnn>> OneDnn::load(int) {
  return llvm::createStringError(
      "built without oneDNN's header (install libdnnl-dev and reconfigure)");
}

#endif

//===----------------------------------------------------------------------===//
// OneDnnGemm
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<ExternalGemm>> OneDnnGemm::load(int threads) {
  auto lib = OneDnn::load(threads);
  if (!lib)
    return lib.takeError();
  return std::unique_ptr<ExternalGemm>(
      new OneDnnGemm(std::move(*lib), threads));
}

std::string OneDnnGemm::version() const { return lib->version(); }

std::string OneDnnGemm::describe() const {
  return lib->describe() +
         ", matmul primitive (fp32; bf16 source and weights into an f32 "
         "destination for --dtype bf16; s8 or u8 source and s8 weights into "
         "s32 for s8 and u8s8) made once per shape outside the timing, "
         "operands as they lie (strides), sum post-op (dst += src * "
         "weights)";
}

llvm::Error OneDnnGemm::prepare(const GemmDesc &desc) {
  if (primitive && preparedFor == desc.str())
    return llvm::Error::success();
  primitive.reset();
  callError.clear();
  auto p = lib->prepareMatmul(desc);
  if (!p)
    return p.takeError();
  primitive = std::move(*p);
  preparedFor = desc.str();
  return llvm::Error::success();
}

void OneDnnGemm::gemm(const GemmDesc &desc, const float *a, const float *b,
                      float *c) const {
  if (!primitive || preparedFor != desc.str()) {
    callError = "no primitive prepared for " + desc.str();
    return;
  }
  if (llvm::Error e = primitive->run(a, b, c))
    callError = llvm::toString(std::move(e));
}

std::string OneDnnGemm::pathFor(const GemmDesc &desc) const {
  if (!callError.empty())
    return "error: " + callError;
  return primitive && preparedFor == desc.str() ? primitive->implementation()
                                                : "";
}
