//! A payload that borrows, declared with `point!` and written with `'_` in the extension.
use hookpoint::{extension, point};

pub struct ToolCall<'a> {
    pub name: &'a str,
    pub calls: u32,
}

point! {
    pub static BEFORE_TOOL: AsyncPoint<ToolCall<'_>> = "pass_borrowed_before_tool";
    pub static AFTER_TOOL: SyncPoint<ToolCall<'_>> = "pass_borrowed_after_tool";
}

#[extension(point = BEFORE_TOOL)]
async fn count(call: &mut ToolCall<'_>) {
    call.calls += 1;
}

#[extension(point = AFTER_TOOL)]
fn check(call: &mut ToolCall<'_>) {
    assert_eq!(call.name, "search");
}

fn main() {
    let name = String::from("search");
    let mut call = ToolCall {
        name: &name,
        calls: 0,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async { BEFORE_TOOL.call(&mut call).await.unwrap() });
    AFTER_TOOL.call(&mut call).unwrap();
    assert_eq!(call.calls, 1);
}
