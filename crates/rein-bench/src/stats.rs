//! Statistics for comparing models honestly: Wilson score intervals, the exact McNemar test on
//! paired outcomes, pass^k over repeats (as in the tau-bench paper) and medians.

/// z for a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wilson 95 % score interval for `passes` out of `n`, as (low, high). `n == 0` gives (0, 1):
/// nothing is known.
pub fn wilson(passes: u64, n: u64) -> (f64, f64) {
    wilson_z(passes, n, Z95)
}

/// Wilson score interval with a given z.
pub fn wilson_z(passes: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n_f = n as f64;
    let p = passes.min(n) as f64 / n_f;
    let z2 = z * z;
    let denom = 1.0 + z2 / n_f;
    let center = (p + z2 / (2.0 * n_f)) / denom;
    let half = z * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denom;
    ((center - half).max(0.0), (center + half).min(1.0))
}

/// Exact two-sided McNemar p-value for `b` and `c` discordant pairs (A passed and B failed, and
/// the reverse): the binomial test of min(b, c) under Binomial(b + c, 1/2), doubled, capped at 1.
/// No discordant pairs gives 1.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    // log pmf, walked up from i = 0 so large n neither overflows nor underflows early.
    let mut log_pmf = n as f64 * 0.5f64.ln();
    let mut tail = 0.0;
    for i in 0..=k {
        tail += log_pmf.exp();
        log_pmf += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
    }
    (2.0 * tail).min(1.0)
}

/// C(n, k) as f64 (exact for the small counts of repeats).
pub fn choose(n: u64, k: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    let mut r = 1.0;
    for i in 0..k {
        r = r * (n - i) as f64 / (i + 1) as f64;
    }
    r
}

/// pass^k: the estimated probability that all k repeats of a task pass, averaged over tasks.
/// Each task is (passes c, trials n) and contributes C(c, k) / C(n, k) (tau-bench). Tasks with
/// fewer than k trials are left out; `None` when no task is left or k is 0.
pub fn pass_hat_k(tasks: &[(u64, u64)], k: u64) -> Option<f64> {
    if k == 0 {
        return None;
    }
    let usable: Vec<f64> = tasks
        .iter()
        .filter(|(_, n)| *n >= k)
        .map(|&(c, n)| choose(c.min(n), k) / choose(n, k))
        .collect();
    if usable.is_empty() {
        return None;
    }
    Some(usable.iter().sum::<f64>() / usable.len() as f64)
}

/// Mean over tasks of each task's pass rate c / n (tasks with n = 0 left out).
pub fn mean_pass_rate(tasks: &[(u64, u64)]) -> Option<f64> {
    let rates: Vec<f64> = tasks
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|&(c, n)| c.min(n) as f64 / n as f64)
        .collect();
    if rates.is_empty() {
        return None;
    }
    Some(rates.iter().sum::<f64>() / rates.len() as f64)
}

/// The median (mean of the middle two for an even count); `None` for no values. NaNs are
/// ignored.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

/// The quartiles (q1, median, q3) by the median-of-halves rule; `None` for no values.
pub fn quartiles(values: &[f64]) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = median(&v)?;
    let half = v.len() / 2;
    let lower = &v[..half.max(1)];
    let upper = &v[(v.len() - half).min(v.len() - 1)..];
    Some((median(lower)?, mid, median(upper)?))
}
