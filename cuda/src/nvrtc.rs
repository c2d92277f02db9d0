//! The kernels' sources and their compilation to PTX by NVRTC, loaded at run time.

use crate::error::{Error, Result};
use crate::network_gemm::BIAS_RELU_SOURCE;

/// The shared per-episode device code (CUDA C, also compiled for the host by the shim).
pub const EPISODE_SOURCE: &str = include_str!("../kernels/episode.cuh");
/// The kernel, compiled after [`EPISODE_SOURCE`].
pub const KERNEL_SOURCE: &str = include_str!("../kernels/evaluate.cu");
/// The kernel's entry point.
pub const KERNEL_NAME: &str = "mg_evaluate";
/// True when NVRTC (`libnvrtc.so`) can be loaded.
pub fn is_nvrtc_present() -> bool {
    // SAFETY: as for `is_driver_present`: a dlopen attempt, no NVRTC call.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// The full kernel source as NVRTC compiles it: [`EPISODE_SOURCE`] then [`KERNEL_SOURCE`].
pub fn kernel_source() -> String {
    format!("{EPISODE_SOURCE}\n{KERNEL_SOURCE}")
}

/// Compile [`kernel_source`] to PTX with NVRTC, for `arch` (e.g. `"compute_90"`) or NVRTC's
/// default. No GPU is needed, only `libnvrtc`.
///
/// # Errors
///
/// [`Error::NoNvrtc`] when NVRTC cannot be loaded; [`Error::Compile`] with NVRTC's log.
pub fn compile_kernel(arch: Option<&str>) -> Result<cudarc::nvrtc::Ptx> {
    compile_source(&kernel_source(), "metagame_evaluate.cu", arch)
}

/// Compile the networks' bias-and-ReLU kernel
/// ([`BIAS_RELU_SOURCE`](crate::network_gemm::BIAS_RELU_SOURCE)) to PTX, as [`compile_kernel`]
/// does the match kernel.
///
/// # Errors
///
/// As [`compile_kernel`].
pub fn compile_bias_relu(arch: Option<&str>) -> Result<cudarc::nvrtc::Ptx> {
    compile_source(BIAS_RELU_SOURCE, "metagame_bias_relu.cu", arch)
}

/// Compile CUDA C `source` (named `name` in NVRTC's messages) to PTX, for `arch` or NVRTC's
/// default, without fused multiply-adds.
pub(crate) fn compile_source(source: &str, name: &str, arch: Option<&str>) -> Result<cudarc::nvrtc::Ptx> {
    if !is_nvrtc_present() {
        return Err(Error::NoNvrtc { reason: "libnvrtc could not be loaded".into() });
    }
    let mut options = vec!["--std=c++11".to_string()];
    if let Some(arch) = arch {
        options.push(format!("--gpu-architecture={arch}"));
    }
    let opts = cudarc::nvrtc::CompileOptions {
        // Never fuse a*b+c: the host computes the same sums without FMAs.
        fmad: Some(false),
        options,
        name: Some(name.into()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| match e {
        cudarc::nvrtc::CompileError::CompileError { log, .. } => {
            Error::Compile(log.to_string_lossy().trim().to_string())
        }
        other => Error::Compile(format!("{other:?}")),
    })
}
