# SMT microkernels (kernels/smt): smt-c-pthreads on the common harness.
$(eval $(call c_kernel,smt,pthreads,))
