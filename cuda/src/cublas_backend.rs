//! [`Cublas`]: the GPU's [`Backend`] for networks, cuBLAS's SGEMM and the bias-and-ReLU
//! kernel on one stream. cuBLAS is loaded at run time like the driver, so the build needs no
//! CUDA toolkit.

use std::sync::Arc;

use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys::cublasOperation_t};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use crate::error::{Error, Result, driver_err};
use crate::network_gemm::{BIAS_RELU_NAME, Backend, LayerGemm, Op};

/// Threads per block of the bias-and-ReLU kernel.
const BIAS_THREADS: u32 = 256;

/// True when cuBLAS (`libcublas`) can be loaded.
pub fn is_cublas_present() -> bool {
    // SAFETY: a dlopen attempt by the library's usual names, then closed; no cuBLAS call.
    unsafe { cudarc::cublas::sys::is_culib_present() }
}

/// cuBLAS and the bias kernel on one stream: the [`Backend`] networks run on.
pub struct Cublas {
    stream: Arc<CudaStream>,
    blas: CudaBlas,
    bias_relu: CudaFunction,
}

impl Cublas {
    /// cuBLAS on `stream`, the bias kernel compiled for `arch`.
    ///
    /// # Errors
    ///
    /// [`Error::NoCublas`] when cuBLAS cannot be loaded or started; NVRTC's and the driver's
    /// errors for the kernel.
    pub(crate) fn new(stream: Arc<CudaStream>, arch: &str) -> Result<Self> {
        if !is_cublas_present() {
            return Err(Error::NoCublas { reason: "libcublas could not be loaded".into() });
        }
        let blas = CudaBlas::new(stream.clone()).map_err(|e| Error::NoCublas { reason: e.to_string() })?;
        let ptx = crate::nvrtc::compile_bias_relu(Some(arch))?;
        let module = stream.context().load_module(ptx).map_err(driver_err)?;
        let bias_relu = module.load_function(BIAS_RELU_NAME).map_err(driver_err)?;
        Ok(Cublas { stream, blas, bias_relu })
    }
}

fn dim(value: usize) -> Result<i32> {
    i32::try_from(value)
        .map_err(|_| Error::Games(metagame_games::Error::Shape(format!("{value} is too large for cuBLAS"))))
}

fn op(op: Op) -> cublasOperation_t {
    match op {
        Op::N => cublasOperation_t::CUBLAS_OP_N,
        Op::T => cublasOperation_t::CUBLAS_OP_T,
    }
}

impl Backend for Cublas {
    type Buffer = CudaSlice<f32>;
    type Error = Error;

    fn upload(&self, values: &[f32]) -> Result<CudaSlice<f32>> {
        if values.is_empty() {
            return self.zeros(0);
        }
        self.stream.clone_htod(values).map_err(driver_err)
    }

    fn zeros(&self, len: usize) -> Result<CudaSlice<f32>> {
        // Device buffers must not be empty.
        self.stream.alloc_zeros(len.max(1)).map_err(driver_err)
    }

    fn gemm(
        &self,
        call: &LayerGemm,
        a: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        c: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let [ea, eb, ec] = call.extents();
        if a.len() < ea || b.len() < eb || c.len() < ec {
            return Err(Error::Games(metagame_games::Error::Shape(format!(
                "an SGEMM reading {ea} and {eb} floats into {ec} given buffers of {}, {} and {}",
                a.len(),
                b.len(),
                c.len()
            ))));
        }
        if call.m == 0 || call.n == 0 {
            return Ok(());
        }
        let cfg = GemmConfig {
            transa: op(call.transa),
            transb: op(call.transb),
            m: dim(call.m)?,
            n: dim(call.n)?,
            k: dim(call.k)?,
            alpha: 1.0f32,
            lda: dim(call.lda)?,
            ldb: dim(call.ldb)?,
            beta: 0.0f32,
            ldc: dim(call.ldc)?,
        };
        // SAFETY: cuBLAS reads `extents()[0]` floats of `a` and `extents()[1]` of `b` and
        // writes `extents()[2]` of `c`, as BLAS defines the call for these dimensions and
        // leading dimensions; each buffer was checked above to be at least that long, and all
        // three live on this handle's stream.
        unsafe { self.blas.gemm(cfg, a, b, c) }.map_err(|e| Error::Driver(format!("cuBLAS SGEMM: {e}")))
    }

    fn bias_relu(
        &self,
        y: &mut CudaSlice<f32>,
        bias: &CudaSlice<f32>,
        outputs: usize,
        rows: usize,
        relu: bool,
    ) -> Result<()> {
        let total = outputs * rows;
        if total == 0 {
            return Ok(());
        }
        let total = u32::try_from(total).map_err(|_| {
            Error::Games(metagame_games::Error::Shape(format!("{total} outputs in one batch")))
        })?;
        let outputs = outputs as u32;
        if y.len() < total as usize || bias.len() < outputs as usize {
            return Err(Error::Games(metagame_games::Error::Shape(format!(
                "a bias of {outputs} over {total} outputs given buffers of {} and {}",
                bias.len(),
                y.len()
            ))));
        }
        let relu = i32::from(relu);
        let cfg = LaunchConfig {
            grid_dim: (total.div_ceil(BIAS_THREADS), 1, 1),
            block_dim: (BIAS_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.stream.launch_builder(&self.bias_relu);
        launch.arg(y).arg(bias).arg(&outputs).arg(&total).arg(&relu);
        // SAFETY: the arguments match `mg_bias_relu(float*, const float*, unsigned, unsigned,
        // int)` in order and type; its threads with `i < total` write `y[i]` and read
        // `bias[i % outputs]`, within the lengths checked above.
        unsafe { launch.launch(cfg) }.map_err(driver_err)?;
        Ok(())
    }

    fn download(&self, buffer: &CudaSlice<f32>) -> Result<Vec<f32>> {
        self.stream.clone_dtoh(buffer).map_err(driver_err)
    }

    fn games_error(error: Error) -> metagame_games::Error {
        match error {
            Error::Games(e) => e,
            other => metagame_games::Error::Backend { backend: "gpu", source: Box::new(other) },
        }
    }
}
