// The unbiased pass@k estimator (Chen et al., 2021): the chance that at least one of k samples,
// drawn without replacement from n of which c passed, passes.
#pragma once

namespace pk::metrics {

/// 1 - C(n-c, k) / C(n, k), evaluated as 1 - prod_{i=n-c+1..n} (1 - k/i): no factorials, so no
/// overflow, and every factor lies in [0, 1] (summed as logs, see pass_at_k.cc). Needs 0 <= c <= n and 1 <= k <= n; throws
/// std::invalid_argument otherwise.
double pass_at_k(int n, int c, int k);

}  // namespace pk::metrics
