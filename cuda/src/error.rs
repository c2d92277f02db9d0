//! The GPU side's errors.

/// What can go wrong on the GPU side.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No usable CUDA device: no driver library, no device, or the driver failed to start.
    #[error("no CUDA device: {reason}")]
    NoDevice {
        /// Why.
        reason: String,
    },
    /// NVRTC (`libnvrtc.so`) could not be loaded, so the kernel cannot be compiled.
    #[error(
        "NVRTC not found ({reason}); install the CUDA toolkit or `pip install nvidia-cuda-nvrtc-cu12` and add its lib folder to LD_LIBRARY_PATH"
    )]
    NoNvrtc {
        /// Why.
        reason: String,
    },
    /// cuBLAS (`libcublas.so`) could not be loaded or started, so networks cannot run on the
    /// GPU.
    #[error(
        "cuBLAS not found ({reason}); install the CUDA toolkit or `pip install nvidia-cublas-cu12` and add its lib folder to LD_LIBRARY_PATH"
    )]
    NoCublas {
        /// Why.
        reason: String,
    },
    /// NVRTC rejected the kernel source.
    #[error("kernel compilation failed: {0}")]
    Compile(String),
    /// A CUDA driver call failed.
    #[error("CUDA driver error: {0}")]
    Driver(String),
    /// Bad input, as reported by the games crate.
    #[error(transparent)]
    Games(#[from] metagame_games::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn driver_err(e: cudarc::driver::DriverError) -> Error {
    Error::Driver(e.to_string())
}
