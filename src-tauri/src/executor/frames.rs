//! An execution's events paced for a screen: outputs gathered per frame (consecutive stream
//! text merged), so a cell printing 100,000 lines sends a few dozen messages to a window,
//! not 100,000.

use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio::sync::mpsc;

use super::{Event, Output};
use crate::error::Result;

/// How long outputs are gathered before they are sent: one frame at 60 Hz.
pub const FRAME: Duration = Duration::from_millis(16);

/// An execution's event, with outputs in batches.
#[derive(Debug)]
pub enum Framed {
    /// Outputs in the kernel's order, gathered over at most one frame.
    Outputs(Vec<Output>),
    /// Any other event, after the outputs that came before it.
    Event(Event),
}

/// Append `output` to `batch`, merging it into the last output when both are text of the
/// same stream.
pub fn push_output(batch: &mut Vec<Output>, output: Output) {
    if let (
        Some(Output::Stream { name, text }),
        Output::Stream {
            name: next,
            text: more,
        },
    ) = (batch.last_mut(), &output)
        && name == next
    {
        text.push_str(more);
        return;
    }
    batch.push(output);
}

/// Pace `events` in frames of `frame`: outputs wait at most one frame, any other event
/// (input, approval, result, error) goes out at once after the outputs before it. The
/// receiver ends after the last event; dropping it drops `events` (which, for an
/// [`ExecutionStream`](super::ExecutionStream), cancels the execution).
pub fn in_frames<S>(events: S, frame: Duration) -> mpsc::Receiver<Result<Framed>>
where
    S: Stream<Item = Result<Event>> + Send + Unpin + 'static,
{
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut events = events;
        let mut batch = Vec::new();
        let mut due: Option<tokio::time::Instant> = None;
        loop {
            let next = match due {
                Some(at) => tokio::select! {
                    biased;
                    event = events.next() => event,
                    () = tokio::time::sleep_until(at) => {
                        due = None;
                        if tx.send(Ok(Framed::Outputs(std::mem::take(&mut batch)))).await.is_err() {
                            return;
                        }
                        continue;
                    }
                },
                None => events.next().await,
            };
            match next {
                Some(Ok(Event::Output(output))) => {
                    push_output(&mut batch, output);
                    due.get_or_insert_with(|| tokio::time::Instant::now() + frame);
                }
                other => {
                    if !batch.is_empty() {
                        due = None;
                        if tx
                            .send(Ok(Framed::Outputs(std::mem::take(&mut batch))))
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                    let Some(event) = other else { return };
                    if tx.send(event.map(Framed::Event)).await.is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StreamName;

    fn line(name: StreamName, text: &str) -> Result<Event> {
        Ok(Event::Output(Output::Stream {
            name,
            text: text.into(),
        }))
    }

    #[tokio::test]
    async fn many_lines_become_few_messages_in_order() {
        let mut events: Vec<Result<Event>> = (0..10_000)
            .map(|i| line(StreamName::Stdout, &format!("{i}\n")))
            .collect();
        events.push(line(StreamName::Stderr, "warning\n"));
        events.push(line(StreamName::Stdout, "after\n"));
        events.push(Ok(Event::Result(Default::default())));
        let mut rx = in_frames(futures_util::stream::iter(events), FRAME);
        let mut received = Vec::new();
        while let Some(item) = rx.recv().await {
            received.push(item.expect("no error"));
        }
        let outputs: Vec<&Output> = received
            .iter()
            .filter_map(|f| match f {
                Framed::Outputs(o) => Some(o),
                Framed::Event(_) => None,
            })
            .flatten()
            .collect();
        assert_eq!(
            outputs.len(),
            3,
            "10,000 stdout lines merge into one output, then stderr, then stdout: {outputs:?}"
        );
        match outputs[0] {
            Output::Stream { text, .. } => {
                assert!(text.starts_with("0\n1\n") && text.ends_with("9999\n"));
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(received.last(), Some(Framed::Event(Event::Result(_)))),
            "the result comes last, after every output"
        );
    }

    #[tokio::test]
    async fn outputs_wait_at_most_a_frame() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut framed = in_frames(
            tokio_stream::wrappers::UnboundedReceiverStream::new(rx),
            FRAME,
        );
        tx.send(line(StreamName::Stdout, "a")).expect("open");
        // The source stays open: the output must go out on the frame's timer alone.
        let first = tokio::time::timeout(Duration::from_secs(5), framed.recv())
            .await
            .expect("a lone output is sent when its frame ends, not held for more")
            .expect("a batch")
            .expect("ok");
        assert!(matches!(first, Framed::Outputs(ref o) if o.len() == 1));
        drop(tx);
        assert!(framed.recv().await.is_none(), "ends with its source");
    }
}
