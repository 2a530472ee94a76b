//! Every dispatch returns `Result<Outcome, Error>`, and `POINT.call(&mut p)?;` stays the common
//! form: `Outcome` is not `#[must_use]`, so ignoring it after `?` is not even a warning.
#![deny(unused_must_use)]

use hookpoint::{Error, Flow, extension, point};

point! {
    pub static GREETING: SyncPoint<String> = "pass_outcome_greeting";
    pub static LOADED: AsyncPoint<String> = "pass_outcome_loaded";
}

#[extension(point = GREETING)]
fn enough(text: &mut String) -> Flow {
    text.push('!');
    Flow::Stop
}

#[extension(point = LOADED)]
async fn loaded(text: &mut String) {
    text.push('.');
}

fn run(text: &mut String) -> Result<(), Error> {
    GREETING.call(text)?;
    hookpoint::call_sync("pass_outcome_greeting", text)?;
    hookpoint::call!("pass_outcome_greeting", text)?;
    let scope = hookpoint::ScopeBuilder::new("pass").build()?;
    scope.enter(|| GREETING.call(text))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        LOADED.call(text).await?;
        hookpoint::call_async("pass_outcome_loaded", text).await?;
        scope.bind(LOADED.call(text)).await?;
        Ok::<(), Error>(())
    })
}

fn main() {
    let mut text = String::from("hi");
    run(&mut text).unwrap();
    assert_eq!(text, "hi!!!!...");
}
