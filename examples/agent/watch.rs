//! `--watch`: hot reload shown live — the demo edits an override file itself, waits for the
//! watcher's new snapshot, shows the system prompt's extensions again, then keeps watching.

use std::path::Path;
use std::time::Duration;

use hookpoint::Scope;

fn prompt_extensions(scope: &Scope) -> Vec<String> {
    scope.snapshot().extension_names("system_prompt")
}

pub async fn watch_demo(
    scope: &Scope,
    dir: &Path,
    seconds: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    scope.on_reload(move |event| {
        let _ = tx.send(event.clone());
    });
    println!(
        "\n--watch: system_prompt runs {:?}",
        prompt_extensions(scope)
    );
    let file = dir.join("extensions/system_prompt/signature_footer.json");
    println!(
        "--watch: writing {{\"enabled\": true}} to {} (an editor save)",
        file.display()
    );
    let tmp = file.with_extension("json.tmp");
    std::fs::write(&tmp, "{\"enabled\": true}\n")?;
    std::fs::rename(&tmp, &file)?;
    match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
        Ok(Some(event)) => println!(
            "--watch: reloaded (generation {}), system_prompt now runs {:?}",
            event.generation,
            prompt_extensions(scope)
        ),
        _ => println!("--watch: no reload seen within 5 s"),
    }
    println!(
        "--watch: edit files under {} to see them applied; Ctrl-C to stop",
        dir.join("extensions").display()
    );
    let deadline =
        (seconds > 0).then(|| tokio::time::Instant::now() + Duration::from_secs(seconds));
    loop {
        let next = async {
            match deadline {
                Some(d) => tokio::time::timeout_at(d, rx.recv()).await.ok().flatten(),
                None => tokio::select! {
                    e = rx.recv() => e,
                    _ = tokio::signal::ctrl_c() => None,
                },
            }
        };
        let Some(event) = next.await else { break };
        println!(
            "--watch: reloaded (generation {}): system_prompt runs {:?}",
            event.generation,
            prompt_extensions(scope)
        );
        for p in &event.problems {
            println!("--watch:   problem (last good version kept): {p}");
        }
    }
    Ok(())
}
