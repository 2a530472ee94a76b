//! The closure shapes `Scope::register` takes on typed points, sync and async.
use hookpoint::{CallStart, Cx, Flow, ScopeBuilder, extensible, point};

point! {
    pub static GREETING: SyncPoint<String> = "pass_register_greeting";
    pub static LOADED: AsyncPoint<Vec<String>> = "pass_register_loaded";
}

#[extensible]
pub fn shout(text: String) -> String {
    text.to_uppercase()
}

fn main() -> Result<(), hookpoint::Error> {
    let scope = ScopeBuilder::new("s").build()?;
    let _a = scope.register(&GREETING).name("a").run(|t: &mut String| t.push('a'))?;
    let _b = scope.register(&GREETING).name("b").run(|_: &mut String| Flow::Stop)?;
    let _c = scope
        .register(&GREETING)
        .name("c")
        .run(|_: &mut String| -> Result<(), String> { Ok(()) })?;
    let _d = scope
        .register(&GREETING)
        .name("d")
        .run_cx(|cx: &Cx<'_>, t: &mut String| t.push_str(cx.point()))?;
    let _e = scope.register(&LOADED).name("e").run_async(|items: &mut Vec<String>| {
        Box::pin(async move {
            items.push("e".into());
            Ok(Flow::Continue)
        })
    })?;
    let _f = scope.register(&LOADED).name("f").run(|items: &mut Vec<String>| items.clear())?;
    let _g = scope
        .register(&SHOUT_START)
        .name("g")
        .run(|call: &mut CallStart<(String,), String>| call.args.0.push('!'))?;
    Ok(())
}
