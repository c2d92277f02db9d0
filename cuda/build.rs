//! Builds the host shim: the kernel's episode logic (`kernels/episode.cuh`) compiled as C++
//! so that tests check it against the CPU evaluator without a GPU.

fn main() {
    println!("cargo:rerun-if-changed=kernels/episode.cuh");
    println!("cargo:rerun-if-changed=kernels/shim.cpp");
    println!("cargo:rerun-if-changed=kernels/evaluate.cu");
    cc::Build::new()
        .cpp(true)
        .file("kernels/shim.cpp")
        .include("kernels")
        .flag_if_supported("-std=c++11")
        // No fused multiply-adds: the device side multiplies with __dmul_rn and --fmad=false.
        .flag_if_supported("-ffp-contract=off")
        .opt_level(2)
        .compile("metagame_kernel_shim");
}
