//! An execution's events paced for a screen: outputs gathered per frame (consecutive stream
//! text merged), so a cell printing 100,000 lines sends a few dozen messages to a window,
//! not 100,000.

use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tokio::sync::mpsc;

use crate::error::Result;
use crate::executor::{Event, Output};

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

/// Pace `events` in frames of `frame`: an output that comes after a quiet frame goes out at
/// once (a `print` shows without delay); outputs that follow it within the frame wait for
/// its end, at most one frame; any other event (input, approval, result, error) goes out at
/// once after the outputs before it. The
/// receiver ends after the last event; dropping it drops `events` (which, for an
/// [`ExecutionStream`](crate::executor::ExecutionStream), cancels the execution).
pub fn in_frames<S>(events: S, frame: Duration) -> mpsc::Receiver<Result<Framed>>
where
    S: Stream<Item = Result<Event>> + Send + Unpin + 'static,
{
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut events = events;
        let mut batch = Vec::new();
        let mut due: Option<tokio::time::Instant> = None;
        // When the last batch went out: outputs within a frame of it wait for the frame.
        let mut last_sent: Option<tokio::time::Instant> = None;
        loop {
            let next = match due {
                Some(at) => tokio::select! {
                    biased;
                    event = events.next() => event,
                    () = tokio::time::sleep_until(at) => {
                        due = None;
                        last_sent = Some(tokio::time::Instant::now());
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
                    let now = tokio::time::Instant::now();
                    let quiet = due.is_none() && last_sent.is_none_or(|t| now >= t + frame);
                    if quiet {
                        last_sent = Some(now);
                        if tx
                            .send(Ok(Framed::Outputs(std::mem::take(&mut batch))))
                            .await
                            .is_err()
                        {
                            return;
                        }
                    } else {
                        due.get_or_insert_with(|| last_sent.map_or(now, |t| t + frame).max(now));
                    }
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
    use crate::executor::StreamName;

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
        let batches = received
            .iter()
            .filter(|f| matches!(f, Framed::Outputs(_)))
            .count();
        assert!(
            batches <= 3,
            "10,003 outputs in a few messages (the first at once, the rest per frame): {batches}"
        );
        let mut outputs = Vec::new();
        for f in &received {
            if let Framed::Outputs(o) = f {
                for output in o {
                    push_output(&mut outputs, output.clone());
                }
            }
        }
        assert_eq!(
            outputs.len(),
            3,
            "stdout lines merge, then stderr, then stdout, in order: {outputs:?}"
        );
        match &outputs[0] {
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
    async fn a_lone_output_goes_out_at_once_and_followers_within_a_frame() {
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
