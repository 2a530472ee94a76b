//! An extension's handler, and its `when` predicate, may have any name: the glue `#[extension]`
//! writes around the call names nothing the user could also name (`cx` and `payload` were its
//! own parameters, which shadowed a handler or predicate of that name).

use hookpoint::{Cx, Error, extension, point};

pub struct Count(pub u32);

point! {
    /// Counts the extensions that ran.
    pub static COUNTED: SyncPoint<Count> = "extension_names_counted";
}

point! {
    /// The same, for async extensions.
    pub static COUNTED_ASYNC: AsyncPoint<Count> = "extension_names_counted_async";
}

#[extension(point = COUNTED)]
fn cx(count: &mut Count) {
    count.0 += 1;
}

#[extension(point = COUNTED)]
fn payload(count: &mut Count) {
    count.0 += 10;
}

#[extension(point = COUNTED)]
fn __hookpoint_payload(count: &mut Count) -> Result<(), Error> {
    count.0 += 100;
    Ok(())
}

fn below_a_million(count: &Count) -> bool {
    count.0 < 1_000_000
}

#[extension(point = COUNTED, when = below_a_million)]
fn with_cx(_: &Cx<'_>, count: &mut Count) -> Result<(), Error> {
    count.0 += 1000;
    Ok(())
}

mod predicates {
    pub fn payload(count: &super::Count) -> bool {
        count.0 < 1_000_000
    }
}
use predicates::payload as is_small;

#[extension(point = COUNTED, when = is_small)]
fn guarded(count: &mut Count) {
    count.0 += 10_000;
}

#[extension(point = COUNTED_ASYNC)]
async fn cx_async(count: &mut Count) {
    count.0 += 1;
}

mod handlers {
    use hookpoint::extension;

    #[extension(point = super::COUNTED_ASYNC)]
    pub async fn cx(count: &mut super::Count) {
        count.0 += 10;
    }
}

#[test]
fn handlers_named_like_the_macros_parameters_run() {
    let mut count = Count(0);
    COUNTED.call(&mut count).unwrap();
    assert_eq!(count.0, 11_111);
    let mut count = Count(0);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(COUNTED_ASYNC.call(&mut count)).unwrap();
    assert_eq!(count.0, 11);
}
