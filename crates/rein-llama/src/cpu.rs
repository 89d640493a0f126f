//! Which CPU features this build of llama.cpp uses, for `rein doctor`: a build that uses a
//! feature the CPU lacks dies with an illegal instruction, and one that leaves a feature unused
//! is slower than it could be.

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
        ("avx_vnni", has(sys::ggml_cpu_has_avx_vnni)),
        ("avx512f", has(sys::ggml_cpu_has_avx512)),
        ("avx512_vnni", has(sys::ggml_cpu_has_avx512_vnni)),
    ]
}
