//! A command hook: an executable in an override folder runs as an extension, reading the
//! payload as JSON on stdin and printing `{"payload": ...}` to replace it: `cargo run -p
//! hookpoint-examples --example command_hook` (Unix; needs `/bin/sh`). A point whose payload
//! crosses a process is declared `#[serde]`.

use std::os::unix::fs::PermissionsExt;

use hookpoint::{LayerKind, LayerSpec, ScopeBuilder, extension, point};

/// A ticket being filed.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Ticket {
    /// Its title.
    pub title: String,
    /// Labels added on the way.
    pub labels: Vec<String>,
}

point! {
    /// Runs before a ticket is filed.
    #[serde]
    pub static FILE_TICKET: SyncPoint<Ticket> = "hooks.file_ticket";
}

#[extension(point = FILE_TICKET, order = 10)]
fn triage(t: &mut Ticket) {
    t.labels.push("triaged".into());
}

/// Order 50 from its file name; it sees what `triage` did and adds a label of its own.
const HOOK: &str = r#"#!/bin/sh
input=$(cat)
case "$input" in
  *urgent*) printf '{"payload": {"title": "URGENT: renew the certificate", "labels": ["triaged", "paged"]}}' ;;
  *) printf '{}' ;;
esac
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = tempfile::tempdir()?;
    let dir = folder.path().join("extensions/hooks.file_ticket");
    std::fs::create_dir_all(&dir)?;
    let hook = dir.join("_50_page.sh");
    std::fs::write(&hook, HOOK)?;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))?;
    // A trusted layer: code in it may run.
    let scope = ScopeBuilder::new("hook-example")
        .layer(folder.path(), LayerSpec::new(LayerKind::new("project"), 10))
        .watch(false)
        .build()?;
    for title in ["renew the certificate (urgent)", "typo on the home page"] {
        let mut ticket = Ticket {
            title: title.into(),
            labels: Vec::new(),
        };
        scope.enter(|| FILE_TICKET.call(&mut ticket))?;
        println!("{} {:?}", ticket.title, ticket.labels);
    }
    Ok(())
}
