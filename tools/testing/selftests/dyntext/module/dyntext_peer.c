// SPDX-License-Identifier: GPL-2.0
/*
 * A second test module with the same code as dyntext_test: one module can
 * be loaded before perf record starts while the other comes and goes.
 * Its functions have the same names; perf tells them apart by module.
 */
#include "dyntext_test.c"
