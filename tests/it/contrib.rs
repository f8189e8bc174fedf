//! `contrib/digestd.service` passes `systemd-analyze verify` with no
//! complaint (it exits 0 on a directive it ignores, so its stderr is read
//! too), with ExecStart pointed at the binary under test. Skipped with a
//! message where systemd is not installed.

use std::process::Command;

fn verify(unit_text: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let unit = dir.path().join("digestd.service");
    std::fs::write(&unit, unit_text).unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), stderr)
}

#[test]
fn the_systemd_unit_verifies_cleanly() {
    if Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: systemd-analyze is not installed");
        return;
    }
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/contrib/digestd.service"
    ))
    .unwrap();
    assert!(
        text.contains("ExecStart=/usr/local/bin/digestd --config /etc/digestd/digestd.toml serve")
    );
    let text = text.replace("/usr/local/bin/digestd", env!("CARGO_BIN_EXE_digestd"));
    let (ok, stderr) = verify(&text);
    assert!(ok && !stderr.contains("digestd.service:"), "{stderr}");
    // The check can fail: an ignored directive is reported.
    let (_, stderr) = verify(&text.replace("Restart=on-failure", "Restart=sometimes"));
    assert!(stderr.contains("digestd.service:"), "{stderr}");
}
