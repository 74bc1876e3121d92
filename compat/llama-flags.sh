# Sourced by compat/run.sh and compat/llama-server.sh: the one set of CPU flags llama.cpp is
# compiled with for `make compat`. A portable x86-64 baseline (AVX2/FMA/F16C), never
# -march=native: some VMs' CPUs advertise instructions (AMX, AVX-512) that the hypervisor does
# not enable, and a native build then dies of SIGILL (`tilezero`) on the first chat request.
# Both scripts put the flags in their install key, so changing them rebuilds. Override with
# LLAMA_CMAKE_ARGS in the environment.
LLAMA_CMAKE_ARGS=${LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF}
