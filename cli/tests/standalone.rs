//! The standalone `hookpoint validate --points points.json <dir>...` binary (assert_cmd), on
//! points exported from this test binary's registry: clean folders pass, every error of a bad
//! folder is listed with its position, and nothing makes it panic.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use hookpoint::cli::PointsFile;
use hookpoint::extension;
use serde::{Deserialize, Serialize};
use tempfile::TempDir;

/// The payload of the serde point.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Note {
    /// Its text.
    pub text: String,
}

hookpoint::point! {
    /// Accepts command hooks.
    #[serde]
    pub static NOTE: SyncPoint<Note> = "note";
    /// Does not (no `#[serde]`).
    pub static PLAIN: SyncPoint<u8> = "plain";
}

#[extension(point = NOTE, order = 10)]
fn stamp(n: &mut Note) {
    n.text.push('!');
}

#[extension(point = PLAIN, order = 10)]
fn bump(n: &mut u8) {
    *n += 1;
}

fn put(root: &Path, rel: &str, bytes: impl AsRef<[u8]>, mode: u32) -> PathBuf {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(&path, bytes).expect("write");
    fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("chmod");
    path
}

/// A temporary folder with `points.json` exported from this binary.
fn workspace() -> TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = serde_json::to_string(&PointsFile::current()).expect("json");
    fs::write(dir.path().join("points.json"), json).expect("write points");
    dir
}

fn hookpoint() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hookpoint"))
}

/// Runs `hookpoint validate --points <ws>/points.json <dirs>` and returns (exit code, stdout
/// with the folder as `[DIR]`, stderr).
fn validate(ws: &TempDir, dirs: &[&str], extra: &[&str]) -> (i32, String, String) {
    let out = hookpoint()
        .arg("validate")
        .arg("--points")
        .arg(ws.path().join("points.json"))
        .args(extra)
        .args(dirs.iter().map(|d| ws.path().join(d)))
        .output()
        .expect("runs");
    let base = ws.path().to_string_lossy().into_owned();
    (
        out.status.code().expect("exited, not killed"),
        String::from_utf8_lossy(&out.stdout).replace(&base, "[DIR]"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn clean_folders_pass_with_exit_0() {
    let ws = workspace();
    let d = ws.path().join("layer");
    put(
        &d,
        "extensions/note/_5_stamp.json",
        r#"{"order": 5}"#,
        0o644,
    );
    put(
        &d,
        "extensions/plain/bump.json",
        r#"{"enabled": false}"#,
        0o644,
    );
    put(
        &d,
        "extensions/note/_20_shout.sh",
        "#!/bin/sh\ncat\n",
        0o755,
    );
    put(
        &d,
        "extensions/webui/sidebar/_10_card.html",
        "<p>card</p>",
        0o644,
    );
    put(
        &d,
        "plugins/memory/config.json",
        r#"{"max_facts": 3}"#,
        0o644,
    );
    let (code, out, err) = validate(&ws, &["layer"], &[]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "ok: 0 problem(s) in 1 folder(s), 4 file(s) fine\n", "")
    );
}

#[test]
fn a_folder_with_errors_lists_every_error_and_exits_1() {
    let ws = workspace();
    let d = ws.path().join("layer");
    put(&d, "extensions/notes/x.json", "{}", 0o644);
    put(&d, "extensions/plain/_5_hook.sh", "#!/bin/sh\n", 0o755);
    put(&d, "extensions/note/nobody.json", r#"{"order": 3}"#, 0o644);
    put(
        &d,
        "extensions/note/_1_stamp.json",
        "{\n  \"order\": 1,\n  \"enabled\": fals\n}",
        0o644,
    );
    put(&d, "extensions/note/empty.json", "", 0o644);
    put(
        &d,
        "extensions/note/binary.json",
        [0u8, 159, 146, 150, 255, 0, 1],
        0o644,
    );
    put(
        &d,
        "extensions/note/typo.json",
        r#"{"enabeld": false}"#,
        0o644,
    );
    put(&d, "extensions/note/shared.json", "{}", 0o666);
    put(&d, "extensions/webui/sidebar/my card.html", "x", 0o644);
    put(&d, "plugins/memory/config.json", "[1, 2]", 0o644);
    put(&d, "plugins/other/config.json", "{\"a\": }", 0o644);
    let (code, out, _) = validate(&ws, &["layer"], &[]);
    assert_eq!(code, 1, "{out}");
    insta::assert_snapshot!("folder_with_errors", out);
}

#[test]
fn json_output_carries_file_line_and_column() {
    let ws = workspace();
    let d = ws.path().join("layer");
    put(&d, "extensions/note/_1_stamp.json", "{\"order\": x}", 0o644);
    let (code, out, _) = validate(&ws, &["layer"], &["--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let p = &v["problems"][0];
    assert_eq!(p["file"], "[DIR]/layer/extensions/note/_1_stamp.json");
    assert_eq!(
        (p["line"].as_u64(), p["column"].as_u64()),
        (Some(1), Some(11))
    );
    assert_eq!(v["folders"], 1);
}

#[test]
fn json_problems_carry_a_stable_code_and_what_they_concern() {
    let ws = workspace();
    let d = ws.path().join("layer");
    put(
        &d,
        "extensions/note/_1_stamp.json",
        "{\n  \"oder\": 3\n}",
        0o644,
    );
    put(&d, "extensions/note/ghost.json", "{\"order\": 3}", 0o644);
    let (code, out, _) = validate(&ws, &["layer"], &["--format", "json"]);
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let problems = v["problems"].as_array().expect("problems");
    let unknown_key = problems
        .iter()
        .find(|p| p["file"] == "[DIR]/layer/extensions/note/_1_stamp.json")
        .expect("the unknown key is reported");
    assert_eq!(unknown_key["code"], "manifest.unknown_key", "{unknown_key}");
    assert_eq!(unknown_key["severity"], "error");
    assert_eq!(
        (unknown_key["line"].as_u64(), unknown_key["column"].as_u64()),
        (Some(2), Some(3))
    );
    let ghost = problems
        .iter()
        .find(|p| p["file"] == "[DIR]/layer/extensions/note/ghost.json")
        .expect("the override of no extension is reported");
    assert_eq!(ghost["code"], "override.unknown_extension", "{ghost}");
    assert_eq!(
        (&ghost["point"], &ghost["extension"]),
        (&"note".into(), &"ghost".into())
    );
    assert_eq!(
        (&ghost["line"], &ghost["column"]),
        (&serde_json::Value::Null, &serde_json::Value::Null)
    );
}

#[test]
fn several_folders_are_all_checked() {
    let ws = workspace();
    put(&ws.path().join("a"), "extensions/nope/x.json", "{}", 0o644);
    put(&ws.path().join("b"), "extensions/nope2/x.json", "{}", 0o644);
    let (code, out, _) = validate(&ws, &["a", "b", "missing"], &[]);
    assert_eq!(code, 1);
    assert!(
        out.contains("[DIR]/a/extensions/nope/x.json: override for point `nope`"),
        "{out}"
    );
    assert!(
        out.contains("[DIR]/b/extensions/nope2/x.json: override for point `nope2`"),
        "{out}"
    );
    assert!(
        out.contains("[DIR]/missing: cannot read the folder"),
        "{out}"
    );
    assert!(
        out.ends_with("failed: 3 problem(s) in 3 folder(s), 0 file(s) fine\n"),
        "{out}"
    );
}

#[test]
fn a_folder_that_is_no_layer_is_a_problem() {
    let ws = workspace();
    fs::create_dir_all(ws.path().join("empty")).expect("mkdir");
    let (code, out, _) = validate(&ws, &["empty", "points.json"], &[]);
    assert_eq!(code, 1);
    assert!(
        out.contains("[DIR]/empty: holds neither `extensions/` nor `plugins/`"),
        "{out}"
    );
    assert!(out.contains("[DIR]/points.json: not a folder"), "{out}");
}

#[test]
fn deep_nesting_is_checked_without_a_panic() {
    let ws = workspace();
    let deep = format!("layer/extensions/note/{}x.json", "d/".repeat(300));
    put(ws.path(), &deep, "{}", 0o644);
    let (code, out, err) = validate(&ws, &["layer"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("override for point `note/d/d/"), "{out}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn an_unreadable_folder_is_reported_not_fatal() {
    let ws = workspace();
    let d = ws.path().join("layer");
    put(&d, "extensions/note/stamp.json", "{}", 0o644);
    let locked = d.join("extensions/plain");
    fs::create_dir_all(&locked).expect("mkdir");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).expect("chmod");
    let (code, out, err) = validate(&ws, &["layer"], &[]);
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).expect("chmod back");
    assert!(!err.contains("panicked"), "{err}");
    if fs::read_dir(&locked).is_ok() && nix_is_root() {
        // Root reads any folder: the scan sees an empty folder.
        assert_eq!(code, 0, "{out}");
    } else {
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("[DIR]/layer/extensions/plain: cannot list folder"),
            "{out}"
        );
    }
}

/// Whether this process runs as root (permission bits do not stop it).
fn nix_is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

#[test]
fn an_unreadable_or_bad_points_file_exits_2() {
    let ws = workspace();
    fs::create_dir_all(ws.path().join("layer/extensions")).expect("mkdir");
    let out = hookpoint()
        .args(["validate", "--points", "/nonexistent/points.json"])
        .arg(ws.path().join("layer"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/points.json"));
    fs::write(
        ws.path().join("points.json"),
        "{\"format\": \"hookpoint-points/1\"",
    )
    .expect("write");
    let (code, _, err) = validate(&ws, &["layer"], &[]);
    assert_eq!(code, 2);
    assert!(err.contains("not a hookpoint points file"), "{err}");
    let (code, out, _) = validate(&ws, &["layer"], &["--format", "json"]);
    assert_eq!(code, 2);
    let answer: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert!(
        answer["error"]
            .as_str()
            .is_some_and(|e| e.contains("not a hookpoint points file")),
        "{answer}"
    );
    // The position is the offending token's, in characters.
    fs::write(
        ws.path().join("points.json"),
        "{\"format\": \"hookpoint-points/1\",\n \"points\": tru\n}",
    )
    .expect("write");
    let (code, _, err) = validate(&ws, &["layer"], &[]);
    assert_eq!(code, 2);
    assert!(err.contains("at line 2, column 12"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    let out = hookpoint().arg("validate").output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let out = hookpoint()
        .args(["validate", "--points", "p.json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "a folder is required");
}

#[test]
fn manifests_are_checked_as_the_loader_checks_match_ordering_and_pins() {
    let ws = workspace();
    let d = ws.path().join("layer");
    put(&d, "hooks/x.sh", "#!/bin/sh\n", 0o755);
    let sum = "0".repeat(64);
    put(
        &d,
        "extensions/note/stamp.json",
        format!(
            r#"{{"match": {{"/text": "*"}}, "after": ["nobody"], "command": ["hooks/x.sh"], "sha256": "{sum}"}}"#
        ),
        0o644,
    );
    put(
        &d,
        "extensions/note/regex.json",
        r#"{"match": {"/text": {"regex": "("}}}"#,
        0o644,
    );
    put(
        &d,
        "extensions/plain/bump.json",
        r#"{"match": {"/": "x"}, "before": ["bump"]}"#,
        0o644,
    );
    let (code, out, _) = validate(&ws, &["layer"], &[]);
    assert_eq!(code, 1, "{out}");
    for want in [
        "regex.json:1:31: invalid manifest: `match` `/text`: bad regex `(`: unclosed group\n",
        "stamp.json: `after` names `nobody`, which point `note` does not have (it has: stamp)",
        "stamp.json: `sha256` pin does not match [DIR]/layer/hooks/x.sh",
        "bump.json: point `plain` cannot be matched (`match`)",
    ] {
        assert!(out.contains(want), "no `{want}` in:\n{out}");
    }
    assert!(!out.contains("`before` names"), "{out}");
}

#[test]
fn folder_plugins_and_plugin_roots_are_checked_with_their_plugin_json() {
    let ws = workspace();
    let root = ws.path().join("plugins");
    put(&root, "good/plugin.json", r#"{"name": "good"}"#, 0o644);
    put(
        &root,
        "good/extensions/note/stamp.json",
        r#"{"order": 3}"#,
        0o644,
    );
    put(
        &root,
        "typo/plugin.json",
        "{\n  \"name\": \"typo\",\n  \"instal\": []\n}",
        0o644,
    );
    put(&root, "other/plugin.json", r#"{"name": "renamed"}"#, 0o644);
    put(&root, "other/extensions/notez/x.json", "{}", 0o644);
    put(
        &root,
        "needy/plugin.json",
        r#"{"name": "needy", "requires": ["good", "ghost"]}"#,
        0o644,
    );
    let (code, out, _) = validate(&ws, &["plugins"], &[]);
    assert_eq!(code, 1, "{out}");
    for want in [
        "[DIR]/plugins/other/extensions/notez/x.json: override for point `notez`",
        "[DIR]/plugins/other/plugin.json: invalid plugin.json: `name` is `renamed` but the folder is `other`",
        "[DIR]/plugins/typo/plugin.json:3:3: invalid plugin.json: unknown field `instal`",
        "[DIR]/plugins/needy/plugin.json: plugin `needy` requires `ghost`, which is neither",
    ] {
        assert!(out.contains(want), "no `{want}` in:\n{out}");
    }
    assert!(!out.contains("/good/"), "{out}");
    // One plugin folder on its own.
    let (code, out, _) = validate(&ws, &["plugins/good"], &[]);
    assert_eq!(code, 0, "{out}");
    // A folder that is none of the three.
    fs::create_dir_all(ws.path().join("empty")).unwrap();
    let (code, out, _) = validate(&ws, &["empty"], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("a layer folder, a folder plugin or a plugin root"),
        "{out}"
    );
}

#[test]
fn wasm_extensions_are_compiled_and_checked_as_the_loader_does() {
    let ws = workspace();
    let d = ws.path().join("layer");
    let good = r#"(module
      (memory (export "memory") 1)
      (func (export "hookpoint_alloc") (param i32) (result i32) (i32.const 1024))
      (func (export "hookpoint_call") (param i32 i32) (result i64)
        (i64.const 0)))"#;
    put(&d, "extensions/note/stamp.wat", good, 0o644);
    put(&d, "extensions/note/broken.wat", "(module broken", 0o644);
    put(
        &d,
        "extensions/note/wasi.wat",
        r#"(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32))) (memory (export "memory") 1))"#,
        0o644,
    );
    put(&d, "extensions/note/bare.wat", "(module)", 0o644);
    put(&d, "extensions/note/shared.wat", good, 0o666);
    put(&d, "wasm/guest.wat", good, 0o644);
    put(
        &d,
        "extensions/note/missing.json",
        r#"{"wasm": "wasm/missing.wat"}"#,
        0o644,
    );
    put(
        &d,
        "extensions/note/grant.json",
        r#"{"wasm": "wasm/guest.wat", "allowed_paths": ["data/none"]}"#,
        0o644,
    );
    put(&d, "extensions/plain/bump.wat", good, 0o644);
    let (code, out, _) = validate(&ws, &["layer"], &[]);
    assert_eq!(code, 1, "{out}");
    for want in [
        "broken.wat: ",
        "wasi.wat: ",
        "bare.wat: ",
        "shared.wat: ",
        "missing.json: ",
        "grant.json: ",
        "bump.wat: point `plain` does not accept wasm extensions",
    ] {
        assert!(out.contains(want), "no `{want}` in:\n{out}");
    }
    assert!(
        !out.contains("stamp.wat"),
        "the good module is fine:\n{out}"
    );
    assert!(out.contains("fd_write"), "{out}");
}
