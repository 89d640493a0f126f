#![allow(clippy::unwrap_used, clippy::expect_used)]

use rein_bench::stats::{
    choose, mcnemar_exact, mean_pass_rate, median, pass_hat_k, quartiles, wilson,
};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn wilson_known_values() {
    // 0/10: low 0, high z^2 / (n + z^2) = 3.841459 / 13.841459 = 0.277532.
    let (lo, hi) = wilson(0, 10);
    assert!(close(lo, 0.0, 1e-12), "{lo}");
    assert!(close(hi, 0.277_532, 1e-5), "{hi}");
    // 10/10: the mirror image.
    let (lo, hi) = wilson(10, 10);
    assert!(close(lo, 0.722_468, 1e-5), "{lo}");
    assert!(close(hi, 1.0, 1e-12), "{hi}");
    // 43/50 (p = 0.86): centre 0.834317, half-width 0.096177, computed by hand.
    let (lo, hi) = wilson(43, 50);
    assert!(close(lo, 0.738_140, 1e-4), "{lo}");
    assert!(close(hi, 0.930_494, 1e-4), "{hi}");
    // Textbook (Newcombe 1998, Table I): 81/263 gives 0.2553 to 0.3662.
    let (lo, hi) = wilson(81, 263);
    assert!(close(lo, 0.2553, 1e-4), "{lo}");
    assert!(close(hi, 0.3662, 1e-4), "{hi}");
    // Nothing known.
    assert_eq!(wilson(0, 0), (0.0, 1.0));
}

#[test]
fn mcnemar_known_values() {
    assert_eq!(mcnemar_exact(0, 0), 1.0);
    // (10, 2): 2 * (C(12,0) + C(12,1) + C(12,2)) / 2^12 = 2 * 79 / 4096 = 0.0385742.
    assert!(close(mcnemar_exact(10, 2), 158.0 / 4096.0, 1e-12));
    assert!(close(mcnemar_exact(2, 10), 158.0 / 4096.0, 1e-12));
    // (3, 3): the sum passes one half; capped at 1.
    assert_eq!(mcnemar_exact(3, 3), 1.0);
    // (5, 0): 2 / 32.
    assert!(close(mcnemar_exact(5, 0), 0.0625, 1e-12));
    // (0, 1): 2 * 1/2 = 1.
    assert_eq!(mcnemar_exact(0, 1), 1.0);
    // Large n neither overflows nor underflows to nonsense: (600, 500) is p ~ 0.0028.
    let p = mcnemar_exact(600, 500);
    assert!(p > 0.001 && p < 0.005, "{p}");
    assert!(mcnemar_exact(3000, 0) >= 0.0);
}

#[test]
fn pass_hat_k_and_mean() {
    assert_eq!(choose(4, 2), 6.0);
    assert_eq!(choose(2, 3), 0.0);
    assert_eq!(choose(10, 0), 1.0);
    // Task A: 2 of 4 pass; task B: 4 of 4. pass^1 = mean(0.5, 1) = 0.75;
    // pass^2 = mean(C(2,2)/C(4,2), 1) = mean(1/6, 1) = 7/12; pass^4 = mean(0, 1) = 0.5.
    let tasks = [(2, 4), (4, 4)];
    assert!(close(pass_hat_k(&tasks, 1).unwrap(), 0.75, 1e-12));
    assert!(close(pass_hat_k(&tasks, 2).unwrap(), 7.0 / 12.0, 1e-12));
    assert!(close(pass_hat_k(&tasks, 4).unwrap(), 0.5, 1e-12));
    assert!(close(mean_pass_rate(&tasks).unwrap(), 0.75, 1e-12));
    // pass^1 is the mean pass rate.
    assert_eq!(pass_hat_k(&tasks, 1), mean_pass_rate(&tasks));
    // k larger than any task's trials, or 0: undefined.
    assert_eq!(pass_hat_k(&tasks, 5), None);
    assert_eq!(pass_hat_k(&tasks, 0), None);
    assert_eq!(mean_pass_rate(&[]), None);
}

#[test]
fn medians_and_quartiles() {
    assert_eq!(median(&[]), None);
    assert_eq!(median(&[3.0]), Some(3.0));
    assert_eq!(median(&[4.0, 1.0, 3.0]), Some(3.0));
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    assert_eq!(median(&[f64::NAN, 1.0]), Some(1.0));
    assert_eq!(quartiles(&[1.0, 2.0, 3.0, 4.0]), Some((1.5, 2.5, 3.5)));
    assert_eq!(quartiles(&[1.0, 2.0, 3.0, 4.0, 5.0]), Some((1.5, 3.0, 4.5)));
    assert_eq!(quartiles(&[7.0]), Some((7.0, 7.0, 7.0)));
}
