//! Reading a whole HTTP body under a cap: the Streamable HTTP transport's
//! answers, the OAuth flow's metadata and token responses.

use std::fmt;

/// Why a body could not be read whole.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Over the cap: refused unread (`declared`: by its `Content-Length`)
    /// or as soon as it crossed the cap (`size` bytes seen by then).
    TooLarge {
        size: u64,
        declared: bool,
        limit: usize,
    },
    /// The connection failed while reading: the cause.
    Read(reqwest::Error),
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge {
                size,
                declared: true,
                limit,
            } => write!(
                f,
                "a body of {size} bytes (its Content-Length) exceeds the message cap of {limit} bytes; it was not read"
            ),
            Self::TooLarge { size, limit, .. } => write!(
                f,
                "the body exceeds the message cap of {limit} bytes ({size} bytes seen); the rest was not read"
            ),
            Self::Read(_) => f.write_str("reading the body failed"),
        }
    }
}

/// Reads `response`'s body, never holding more than `limit` bytes of it.
pub(crate) async fn read_capped(
    response: &mut reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, BodyError> {
    let too_large = |size: u64, declared| BodyError::TooLarge {
        size,
        declared,
        limit,
    };
    let declared = response.content_length();
    if let Some(len) = declared
        && len > limit as u64
    {
        return Err(too_large(len, true));
    }
    let capacity = declared.map_or(0, |len| usize::try_from(len).unwrap_or(limit));
    let mut buf = Vec::with_capacity(capacity.min(limit));
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Read)? {
        let size = buf.len() + chunk.len();
        if size > limit {
            return Err(too_large(size as u64, false));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf)
}
