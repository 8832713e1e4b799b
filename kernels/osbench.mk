# OS-overhead microbenchmarks (kernels/osbench): osbench-c-serial on the common harness.
$(eval $(call c_kernel,osbench,serial,))
