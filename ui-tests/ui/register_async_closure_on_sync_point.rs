use hookpoint::{Flow, ScopeBuilder, point};

point! {
    pub static GREETING: SyncPoint<String> = "greeting";
}

fn main() {
    let scope = ScopeBuilder::new("s").build().unwrap();
    let _guard = scope.register(&GREETING).name("later").run_async(|text: &mut String| {
        Box::pin(async move {
            text.push('!');
            Ok(Flow::Continue)
        })
    });
}
