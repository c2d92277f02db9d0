// The bias and ReLU after one layer's SGEMM: y is rows × outputs, row-major (cuBLAS wrote
// the column-major outputs × rows). A negative sum becomes 0 where relu is set; a NaN
// passes through, as on the CPU. Its host twin is bias_relu_host in network_gemm.rs.
extern "C" __global__ void mg_bias_relu(float *y, const float *bias, unsigned int outputs,
                                        unsigned int total, int relu) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) {
        return;
    }
    float z = y[i] + bias[i % outputs];
    y[i] = (relu && z < 0.0f) ? 0.0f : z;
}
