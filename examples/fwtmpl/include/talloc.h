// SPDX-License-Identifier: MIT
// fwtmpl's allocation macro, as Ligra's newA: every array of the framework
// and of its apps comes from it, inside template bodies too.
#pragma once

#include <cstdlib>

#define newA(__E, __n) ((__E *)malloc((size_t)(__n) * sizeof(__E)))
