//! Which CPU features this build of llama.cpp uses, for `rein doctor`: a build that uses a
//! feature the CPU lacks dies with an illegal instruction, and one that leaves a feature unused
//! is slower than it could be.

/// Whether this build carries several CPU variants of ggml and picks one at run time. It does
/// not: llama-cpp-sys-2 can build them (its `dynamic-backends` feature turns on
/// `GGML_BACKEND_DL` and `GGML_CPU_ALL_VARIANTS`), but only as shared libraries loaded from a
/// directory fixed at build time, and the `ggml_cpu_has_*` queries below would then live in
/// those libraries instead of this binary. One variant is compiled in, chosen when rein is built.
pub const RUNTIME_DISPATCH: bool = false;

/// The x86 features that matter most to llama.cpp's matrix kernels, as (name, used by this
/// build). Names match the flags of /proc/cpuinfo.
pub fn built_features() -> Vec<(&'static str, bool)> {
    use llama_cpp_sys_2 as sys;
    // SAFETY: each query reads a constant compiled into ggml; no arguments, no state.
    let has = |f: unsafe extern "C" fn() -> std::os::raw::c_int| unsafe { f() } != 0;
    vec![
        ("avx", has(sys::ggml_cpu_has_avx)),
        ("avx2", has(sys::ggml_cpu_has_avx2)),
        ("fma", has(sys::ggml_cpu_has_fma)),
        ("f16c", has(sys::ggml_cpu_has_f16c)),
        ("bmi2", has(sys::ggml_cpu_has_bmi2)),
        ("avx_vnni", has(sys::ggml_cpu_has_avx_vnni)),
        ("avx512f", has(sys::ggml_cpu_has_avx512)),
        ("avx512_vnni", has(sys::ggml_cpu_has_avx512_vnni)),
        ("avx512vbmi", has(sys::ggml_cpu_has_avx512_vbmi)),
        ("avx512_bf16", has(sys::ggml_cpu_has_avx512_bf16)),
        ("amx_int8", has(sys::ggml_cpu_has_amx_int8)),
    ]
}
