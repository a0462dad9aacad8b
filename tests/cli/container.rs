//! The documented `docker run` writes its bundle on a Linux host as a non-root user. No
//! container engine runs here, so the image's runtime conditions are reproduced with the
//! built binary: the image's working directory owned by root as the Dockerfile leaves it, the
//! documented mount (`-v "$PWD/reports:/work/reports"`) owned by the host user, and the
//! process running as `--user "$(id -u):$(id -g)"` (or as the image's own user, which is
//! what failed before).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::common::*;

/// The image's own user (Dockerfile `USER`).
const IMAGE_USER: u32 = 10001;
/// A host user, as `id -u` prints it on a typical Linux desktop or CI runner.
const HOST_USER: u32 = 1000;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The image's file system: the binary in a bin directory, `/work` as the Dockerfile makes it,
/// and `/work/reports` as the host user's `mkdir -p reports` mounted there.
fn image_like(root: &Path, host_user: Option<u32>) -> (PathBuf, PathBuf) {
    chmod(root, 0o755);
    let bin = root.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let ppcert = bin.join("ppcert");
    std::fs::copy(env!("CARGO_BIN_EXE_ppcert"), &ppcert).unwrap();
    chmod(&ppcert, 0o755);
    let work = root.join("work");
    std::fs::create_dir(&work).unwrap();
    chmod(&work, 0o1777); // RUN mkdir -p /work/reports && chmod 1777 /work /work/reports
    let reports = work.join("reports");
    std::fs::create_dir(&reports).unwrap();
    chmod(&reports, 0o755);
    if let Some(user) = host_user {
        std::os::unix::fs::chown(&reports, Some(user), Some(user)).unwrap();
    }
    (ppcert, work)
}

/// `docker run ... ppcert run` as the image would run it: `CI=true`, nothing else inherited.
async fn run_in_image(ppcert: &Path, work: &Path, user: Option<u32>) -> Finished {
    let mut command = tokio::process::Command::new(ppcert);
    command
        .arg("run")
        .current_dir(work)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("CI", "true");
    if let Some(user) = user {
        command.uid(user).gid(user);
    }
    let output = command.output().await.unwrap();
    finished(output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_docker_run_writes_the_bundle_as_the_host_user() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dockerfile = std::fs::read_to_string(repo.join("Dockerfile")).unwrap();
    assert!(
        dockerfile.contains(&format!("USER {IMAGE_USER}"))
            && dockerfile.contains("chmod 1777 /work /work/reports")
            && dockerfile.contains("WORKDIR /work"),
        "the conditions reproduced here are the image's"
    );
    let guide = std::fs::read_to_string(repo.join("docs/ci.md")).unwrap();
    let documented =
        "docker run --rm --user \"$(id -u):$(id -g)\" -v \"$PWD/reports:/work/reports\"";
    assert!(guide.contains(documented) && dockerfile.contains(documented));
    // As root (CI here) the process really changes user; elsewhere it runs as itself.
    let root = unsafe { libc::geteuid() } == 0;
    let host_user = root.then_some(HOST_USER);
    let dir = tempfile::tempdir().unwrap();
    let (ppcert, work) = image_like(dir.path(), host_user);
    let finished = run_in_image(&ppcert, &work, host_user).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let bundles: Vec<PathBuf> = std::fs::read_dir(work.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(bundles.len(), 1, "{bundles:?}");
    let evidence = bundles[0].join("evidence.json");
    assert_eq!(read_json(&evidence)["verdict"], "passed");
    if let Some(user) = host_user {
        assert_eq!(
            std::fs::metadata(&evidence).unwrap().uid(),
            user,
            "the host user owns (and can delete) what the container wrote"
        );
        // The old command, without --user: the image's own user cannot write to a directory
        // the host user owns; said plainly, before a request is sent.
        let dir = tempfile::tempdir().unwrap();
        let (ppcert, work) = image_like(dir.path(), host_user);
        let refused = run_in_image(&ppcert, &work, Some(IMAGE_USER)).await;
        assert_eq!(refused.code, 2, "{}", refused.stderr);
        assert!(
            refused.stderr.contains("Permission denied"),
            "{}",
            refused.stderr
        );
    }
}
