//! The streams of one session ([`Stream`]), by id ([`Streams`]).

use std::collections::VecDeque;

use axum::body::Bytes;

use super::sink::Sink;
use crate::transport::budget::Charge;

/// The streams of a session by id, oldest first: a short sorted list (a
/// replica's ids only grow, so a new stream goes last), its buffer freed
/// when it empties.
#[derive(Default)]
pub(super) struct Streams(VecDeque<(u64, Stream)>);

impl Streams {
    fn index(&self, id: u64) -> Option<usize> {
        self.0.binary_search_by_key(&id, |(k, _)| *k).ok()
    }

    pub(super) fn get(&self, id: u64) -> Option<&Stream> {
        self.index(id).map(|i| &self.0[i].1)
    }

    pub(super) fn get_mut(&mut self, id: u64) -> Option<&mut Stream> {
        self.index(id).map(|i| &mut self.0[i].1)
    }

    /// Adds stream `id` (usually newer than every stream here: it goes
    /// last).
    pub(super) fn push(&mut self, id: u64, stream: Stream) {
        match self.0.back() {
            Some((last, _)) if *last > id => {
                let at = self.0.partition_point(|(k, _)| *k < id);
                self.0.insert(at, (id, stream));
            }
            _ => self.0.push_back((id, stream)),
        }
    }

    pub(super) fn remove(&mut self, id: u64) -> Option<Stream> {
        let stream = self
            .index(id)
            .and_then(|i| self.0.remove(i))
            .map(|(_, s)| s);
        if self.0.is_empty() {
            self.0 = VecDeque::new();
        }
        stream
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// The room its buffer holds (for tests).
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.0.capacity()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &(u64, Stream)> {
        self.0.iter()
    }

    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut (u64, Stream)> {
        self.0.iter_mut()
    }
}

#[derive(Default)]
pub(super) struct Stream {
    pub(super) seq: u64,
    /// The last event handed to the client's channel (with an event store,
    /// events wait to be stored first; without, it is `seq`).
    pub(super) forwarded: u64,
    pub(super) events: VecDeque<(u64, Bytes)>,
    /// With an event store: the charges of the events not yet stored and
    /// handed to the client's channel, by number.
    pub(super) unforwarded: VecDeque<(u64, Charge)>,
    pub(super) tx: Option<Sink>,
    /// Counts the responses attached to this stream (the last one is the
    /// one that matters).
    pub(super) attachment: u64,
    /// The attached response has had every event since its client's
    /// starting point (none was cut off).
    pub(super) whole: bool,
    pub(super) finished: bool,
    /// Finished, and its last response read it all to the end: kept only
    /// while it is among the last `DELIVERED_KEPT` such streams.
    pub(super) delivered: bool,
}
