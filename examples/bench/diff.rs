//! `diff`: `ppcert diff` of two `--scale 100` bundles of the embedded sandbox (different
//! seeds), each verified first as `diff` always does: the median wall time of RUNS.

use std::process::Command;
use std::time::Instant;

pub(crate) fn diff() {
    let dir = tempfile::tempdir().unwrap();
    for (out, seed) in [("base", "1"), ("new", "2")] {
        let status = Command::new(super::binary())
            .args(["run", "--scale", "100", "--concurrency", "32", "--quiet"])
            .args(["--seed", seed, "--out", out])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "the --scale 100 run passes");
    }
    let exchanges = std::fs::read_to_string(dir.path().join("new/journal.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| l.starts_with(r#"{"type":"exchange""#))
        .count();
    let mut walls = Vec::new();
    for _ in 0..super::RUNS {
        let started = Instant::now();
        let output = Command::new(super::binary())
            .args(["diff", "base", "new"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let wall = started.elapsed().as_secs_f64();
        assert_eq!(
            output.status.code(),
            Some(0),
            "two seeds of one sandbox diff clean"
        );
        println!("  diff: {wall:.3} s");
        walls.push(wall);
    }
    println!(
        "diff: median {:.3} s for two --scale 100 bundles ({exchanges} exchanges each), both verified",
        super::median(walls)
    );
}
