/* Work classes (harness/analysis/classes.c): the reader of mangled names
 * held to the real demangler, and the communication rule on them. */
#include <cuproof/metrics.h>

#include "analysis/coll_rows.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (the Itanium C++ ABI's, which the toolkit's
 * __cu_demangle also follows), declared here so that a C test can call it. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Kernel names as CUPTI hands them: NCCL's old and new kernels, PyTorch's,
 * CUTLASS-like templates, anonymous namespaces, std, lambdas, literals,
 * substitutions, and C names. */
static const char *const names[] = {
    "_Z43ncclDevKernel_AllReduce_Sum_f32_RING_LLP128v",
    "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
    "_Z36ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork",
    "_Z30ncclDevKernel_SendRecv_RING_LL24ncclDevKernelArgsStorageILm4096EE",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE5_clEvEUlfE_EEvS4_RKT_EUliE_EEviT1_",
    "_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12MmaPipelinedIfEELb0EEEEEvNT_6ParamsE",
    "_Z6kernelIfEvPT_i",
    "_Z10add_kernelPfPKfS1_i",
    "_ZL12local_kernelPii",
    "_ZN12_GLOBAL__N_111anon_kernelEPf",
    "_ZN3cub11EmptyKernelIvEEvv",
    "_ZN4cuda3std3__48__detail20__cccl_kernel_helperEv",
    "_ZN5myapp4nccl9my_reduceEPf",
    "_ZN5myapp11nccl_helperEPfi",
    "_ZNSt7details5dummyEv",
    "_ZSt4swapIiEvRT_S1_",
    "_ZN3foo3barILb1ELi3ELl42EEEvPKcPS2_",
    "_ZN3foo6kernelIJifdEEEvDpT_",
    "_ZN7cutlass6device13reduce_kernelIL_Z4funciEEEvv",
    "_ZN8flashinf11attn_kernelILj128ELj64EN3cub8NullTypeEEEvPfi",
    "_Z13triton_kernelPvS_S_S_i",
    "_ZN5torch4cuda4nccl6detail15ncclAllReduceOpEv",
    "_Z8fill_bufIdLi2EEvPT_m",
    "_ZN2ns1AIiE6kernelEv",
    "_ZN2ns1AIiE6kernelIfEEvPT_",
    "_ZN6thrust8cuda_cub4core13_kernel_agentINS0_6__fill7functorINS_10device_ptrIiEEiEEmEEvT_T0_",
    "ncclKernel_AllGather_RING_LL_Sum_int8_t",
    "ncclDevKernel_Generic",
    "triton_poi_fused_add_0",
    "memcpy",
};

/* The demangled name's leading identifier: its longest run of
 * [A-Za-z0-9_] from the start. */
static size_t leading(const char *s)
{
    size_t n = 0;
    while (s[n] && (isalnum((unsigned char)s[n]) || s[n] == '_'))
        n++;
    return n;
}

Test(classes, leading_identifier_is_the_demangled_names)
{
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        int status = 0;
        char *d = __cxa_demangle(names[i], NULL, NULL, &status);
        /* Every mangled name of the list is a real one; a C name stays itself. */
        cr_expect(strncmp(names[i], "_Z", 2) != 0 || (status == 0 && d), "%s: not a mangled name",
                  names[i]);
        const char *want = status == 0 && d ? d : names[i];
        const char *got;
        size_t n = cp_name_leading(names[i], &got);
        size_t k = leading(want);
        cr_expect(n == k && memcmp(got, want, k) == 0, "%s: read \"%.*s\", demangled \"%.60s\"",
                  names[i], (int)n, got, want);
        free(d);
    }
}

Test(classes, comm_rule_on_demangled_names)
{
    cr_expect(cp_name_is_comm("_Z43ncclDevKernel_AllReduce_Sum_f32_RING_LLP128v", NULL));
    cr_expect(cp_name_is_comm("_Z36ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork", NULL));
    cr_expect(cp_name_is_comm("ncclKernel_AllGather_RING_LL_Sum_int8_t", NULL));
    /* "nccl" must lead the demangled name: a namespace or a later part
     * is not enough, and the match is case-sensitive (HTA's). */
    cr_expect_not(cp_name_is_comm("_ZN5myapp4nccl9my_reduceEPf", NULL));
    cr_expect_not(cp_name_is_comm("_ZN5torch4cuda4nccl6detail15ncclAllReduceOpEv", NULL));
    cr_expect_not(cp_name_is_comm("NCCLKernel", NULL));
    cr_expect_not(cp_name_is_comm("_Z10add_kernelPfPKfS1_i", NULL));
    /* The mangled prefix "_Z39" is not the name. */
    cr_expect_not(cp_name_is_comm("_Z43ncclDevKernel_AllReduce_Sum_f32_RING_LLP128v", "_Z"));
    cr_expect(cp_name_is_comm("_ZN5torch4cuda4nccl6detail15ncclAllReduceOpEv", "torch"));
    cr_expect_not(cp_name_is_comm(NULL, NULL));
}

Test(classes, patterns_are_identifiers)
{
    cr_expect(cp_comm_pattern_valid("nccl"));
    cr_expect(cp_comm_pattern_valid("rccl_2"));
    cr_expect_not(cp_comm_pattern_valid(""));
    cr_expect_not(cp_comm_pattern_valid(NULL));
    cr_expect_not(cp_comm_pattern_valid("at::native"));
    cr_expect_not(cp_comm_pattern_valid("nccl*"));
}

Test(classes, work_classes)
{
    cp_activity k = {.kind = CP_ACT_KERNEL, .name = "ncclDevKernel_Generic"};
    cr_expect_eq(cp_activity_class(&k, NULL), CP_CLASS_COMMUNICATION);
    k.name = "gemm";
    cr_expect_eq(cp_activity_class(&k, NULL), CP_CLASS_COMPUTE);
    cp_activity c = {.kind = CP_ACT_MEMCPY, .name = "nccl_copy"};
    cr_expect_eq(cp_activity_class(&c, NULL), CP_CLASS_MEMORY);
    c.kind = CP_ACT_MEMSET;
    cr_expect_eq(cp_activity_class(&c, NULL), CP_CLASS_MEMORY);
    cp_activity s = {.kind = CP_ACT_RUNTIME, .name = "cudaStreamSynchronize"};
    cr_expect_eq(cp_activity_class(&s, NULL), CP_CLASS_HOST, "a wait is never compute");
    s.kind = CP_ACT_RANGE;
    s.name = "ncclAllReduce";
    cr_expect_eq(cp_activity_class(&s, NULL), CP_CLASS_HOST);
    cr_expect_str_eq(cp_work_class_name(CP_CLASS_COMMUNICATION), "communication");
    cr_expect_str_eq(cp_work_class_name(CP_CLASS_COUNT), "unknown");
}

/* Mangled names cut short and mutated anywhere: the reader stays inside
 * each name (each copy sized exactly, so that under ci/sanitize-cpu.sh a
 * read past its NUL is an error) and what it yields lies inside the name
 * or is one of its constants. Among them `_ZN1aIUlvEU`, a closure
 * followed by a lone U at the end, which once read two bytes on. */
Test(classes, malformed_names_stay_inside)
{
    static const char alpha[] = "_0123456789EINFXJZULTSADvtlpfr_KVRO";
    srand(27);
    for (int it = 0; it < 200000; it++) {
        const char *s = names[(size_t)it % (sizeof names / sizeof *names)];
        size_t n = strlen(s), cut = n ? (size_t)rand() % (n + 1) : 0;
        char *c = malloc(cut + 1);
        cr_assert_not_null(c);
        memcpy(c, s, cut);
        c[cut] = '\0';
        for (int k = rand() % 4; k > 0 && cut; k--)
            c[(size_t)rand() % cut] = alpha[(size_t)rand() % (sizeof alpha - 1)];
        const char *o;
        size_t got = cp_name_leading(c, &o);
        bool inside = o >= c && o + got <= c + cut;
        bool constant = (got == 4 && memcmp(o, "void", 4) == 0) ||
                        (got == 3 && memcmp(o, "std", 3) == 0) || got == 0;
        cr_assert(inside || constant, "'%s' gave \"%.*s\"", c, (int)got, o);
        free(c);
    }
    const char *o;
    cr_expect_eq(cp_name_leading("_ZN1aIUlvEU", &o), 0);
}

/* NCCL's kernel names read into the per-collective table's classes, from
 * the mangled name CUPTI gives and from the demangled one alike. */
Test(classes, nccl_kernel_names_give_operation_algorithm_and_protocol)
{
    static const struct {
        const char *name, *op, *algo, *proto;
    } cases[] = {
        {"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
         "AllReduce", "RING", "LL"},
        {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "AllGather", "RING",
         "LL"},
        {"_Z47ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL12824ncclDevKernelArgsStorageILm4096EE",
         "ReduceScatter", "RING", "LL128"},
        {"ncclDevKernel_AllReduce_Sum_f32_COLLNET_DIRECT_SIMPLE", "AllReduce", "COLLNET_DIRECT",
         "SIMPLE"},
        {"ncclDevKernel_AllReduce_Sum_f16_NVLS_TREE_SIMPLE", "AllReduce", "NVLS_TREE", "SIMPLE"},
        {"_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE", "SendRecv", "", ""},
        {"ncclKernel_Broadcast_RING_LL_Sum_int8_t", "Broadcast", "RING", "LL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        coll_class k;
        cr_expect(cp__coll_class_of(cases[i].name, &k), "%s", cases[i].name);
        cr_expect_str_eq(k.op, cases[i].op, "%s", cases[i].name);
        cr_expect_str_eq(k.algo, cases[i].algo, "%s", cases[i].name);
        cr_expect_str_eq(k.proto, cases[i].proto, "%s", cases[i].name);
    }
    coll_class k;
    cr_expect_not(cp__coll_class_of("_Z10add_kernelPfS_", &k));
    cr_expect_not(cp__coll_class_of("ncclDevKernel_", &k), "no operation");
    cr_expect_not(cp__coll_class_of(NULL, &k));
}

