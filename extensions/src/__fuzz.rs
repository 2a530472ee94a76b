//! Entry points for the fuzz targets in `fuzz/`: parsers of input the agent does not control
//! that the public API reaches only through the network. **Not public API**: hidden, unstable.
//!
//! ```
//! use hookpoint_extensions::__fuzz::sse_events;
//! let body = b"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n";
//! let whole = sse_events(vec![body.to_vec()]);
//! let split = sse_events(body.chunks(3).map(<[u8]>::to_vec).collect());
//! assert_eq!(whole, split);
//! assert_eq!(whole.len(), 1);
//! ```

use crate::model::ModelEvent;

/// The events an OpenAI-compatible SSE body reads as when the network delivers it in `chunks`:
/// each `data:` payload's events in order up to `[DONE]`, the first error (as its message)
/// ending the list.
pub fn sse_events(chunks: Vec<Vec<u8>>) -> Vec<Result<ModelEvent, String>> {
    crate::model::openai::sse_events(chunks)
}
