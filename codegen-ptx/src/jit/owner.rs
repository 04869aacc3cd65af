//! Who owns a buffer (its device, context and allocation stream) and whether a `Jit`'s stream
//! may use it: the pure rule [`admit`], tested without a GPU.

use std::fmt;

use cudarc::driver::CudaStream;

/// Where a buffer lives: its device, CUDA context and allocation stream, and whether its cudarc
/// context records events for it. Handles are shown and compared as integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BufferOwner {
    /// Device ordinal.
    pub ordinal: usize,
    /// The `CUcontext` handle.
    pub context: usize,
    /// The `CUstream` handle of the stream the buffer was allocated on (0, 1, 2: a default stream).
    pub stream: usize,
    /// Whether the cudarc context the buffer was allocated through tracks its uses with events
    /// (`CudaContext::is_event_tracking`).
    pub tracking: bool,
}

impl BufferOwner {
    /// The owner of what is allocated on `stream`.
    pub fn of_stream(stream: &CudaStream) -> Self {
        let ctx = stream.context();
        BufferOwner {
            ordinal: ctx.ordinal(),
            context: ctx.cu_ctx() as usize,
            stream: stream.cu_stream() as usize,
            tracking: ctx.is_event_tracking(),
        }
    }

    /// Whether `stream` is a default stream (the legacy null stream, `CU_STREAM_LEGACY` or
    /// `CU_STREAM_PER_THREAD`) rather than one created by `new_stream`.
    pub fn on_default_stream(&self) -> bool {
        self.stream <= 2
    }
}

impl fmt::Display for BufferOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "device {} (context {:#x}, {}stream {:#x}",
            self.ordinal,
            self.context,
            if self.on_default_stream() {
                "default "
            } else {
                ""
            },
            self.stream
        )?;
        if !self.tracking {
            f.write_str(", no event tracking")?;
        }
        f.write_str(")")
    }
}

/// Why a `Jit` refuses a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ForeignReason {
    /// The buffer lives in another CUDA context: its address means nothing (or something else)
    /// in the `Jit`'s.
    OtherContext,
    /// Another stream's buffer whose cudarc context does not record events: nothing would order
    /// its writes before the `Jit`'s use, or its free after it.
    Untracked,
    /// Another stream's buffer allocated on a default stream: cudarc orders such a buffer with
    /// other streams only while its context has a stream of its own, which may end before the
    /// `Jit`'s use does.
    DefaultStream,
}

impl fmt::Display for ForeignReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ForeignReason::OtherContext => {
                "it is another CUDA context, where its address means nothing; allocate it through the same Jit"
            }
            ForeignReason::Untracked => {
                "its context does not track uses with events, so nothing would order its writes and its free with the Jit's stream; allocate it through the Jit"
            }
            ForeignReason::DefaultStream => {
                "it was allocated on a default stream, which cudarc orders with other streams only while its context has a stream of its own; allocate it on a created stream or through the Jit"
            }
        })
    }
}

/// A buffer a `Jit` cannot use, with both owners and the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error("belongs to {owner}, not to the Jit's {jit}: {reason}")]
pub struct ForeignBuffer {
    /// Where the buffer lives.
    pub owner: BufferOwner,
    /// The `Jit`'s context and stream.
    pub jit: BufferOwner,
    /// Why that cannot work.
    pub reason: ForeignReason,
}

/// Whether a buffer owned by `owner` may be used on the stream `jit` describes.
///
/// Accepted: a buffer of the `Jit`'s own stream (stream order alone orders its allocation, every
/// use and its free), or a buffer of another stream of the same CUDA context that cudarc tracks
/// with events and that was allocated on a created stream: each use waits for its last write (or,
/// for a write, its last read too) and records itself, and its free waits for those records.
/// Refused: another context ([`ForeignReason::OtherContext`]), an untracked buffer of another
/// stream ([`ForeignReason::Untracked`]), and one allocated on a default stream
/// ([`ForeignReason::DefaultStream`]).
pub fn admit(owner: &BufferOwner, jit: &BufferOwner) -> Result<(), ForeignBuffer> {
    let refuse = |reason| {
        Err(ForeignBuffer {
            owner: *owner,
            jit: *jit,
            reason,
        })
    };
    if owner.context != jit.context {
        refuse(ForeignReason::OtherContext)
    } else if owner.stream == jit.stream {
        Ok(())
    } else if !owner.tracking {
        refuse(ForeignReason::Untracked)
    } else if owner.on_default_stream() {
        refuse(ForeignReason::DefaultStream)
    } else {
        Ok(())
    }
}
