//! The call paths of a [`Client`]: typed, raw, with a deadline, with file descriptors; each
//! queues its call in the core, writes it itself when the core's write rule says so
//! ([`direct`](crate::client::direct)), and waits for its reply (dropping the wait forgets the
//! call).

use std::future::Future;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tracing::Instrument;

use crate::client::shared::{CallSlot, Inner};
use crate::client::{Client, direct};
use crate::conn::reconnect::Admission;
use crate::conn::{CallError, Connection, WriteTurn};
use crate::proto::{self, Procedure};
use crate::wire::xdr::{Encode, Preencoded};

impl Client {
    /// Make a typed call.
    pub async fn call<P: Procedure>(&self, args: &P::Args) -> Result<P::Ret, CallError> {
        self.call_inner::<P>(args, None).await
    }

    /// Make a typed call that fails with [`CallError::TimedOut`] after `timeout` (the
    /// connection stays usable; a late reply is discarded).
    pub async fn call_timeout<P: Procedure>(
        &self,
        args: &P::Args,
        timeout: Duration,
    ) -> Result<P::Ret, CallError> {
        self.call_inner::<P>(args, Some(Instant::now() + timeout))
            .await
    }

    /// Call a typed-parameter getter with the flags libvirt's C library sends: `args`'
    /// flags plus `VIR_TYPED_PARAM_STRING_OKAY`, without which the daemon leaves string
    /// parameters out of the answer ([`proto::typed_params`]).
    ///
    /// ```no_run
    /// # async fn demo(client: libvirt_remote::Client, dom: libvirt_remote::proto::types::NonnullDomain)
    /// # -> Result<(), libvirt_remote::conn::CallError> {
    /// use libvirt_remote::proto::procs::domain::{DomainGetBlkioParameters, DomainGetParamsArgs};
    ///
    /// let args = DomainGetParamsArgs { dom, nparams: 0, flags: Default::default() };
    /// let n = client.call_typed_params::<DomainGetBlkioParameters>(&args).await?.nparams;
    /// let all = client
    ///     .call_typed_params::<DomainGetBlkioParameters>(&DomainGetParamsArgs { nparams: n, ..args })
    ///     .await?;
    /// for p in &all.params {
    ///     println!("{} = {:?}", p.field, p.value);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn call_typed_params<P: proto::typed_params::TypedParamsGetter>(
        &self,
        args: &P::Args,
    ) -> Result<P::Ret, CallError>
    where
        P::Args: Clone,
    {
        let args = proto::typed_params::as_libvirt_sends::<P>(args.clone());
        self.call_inner::<P>(&args, None).await
    }

    async fn call_inner<P: Procedure>(
        &self,
        args: &P::Args,
        deadline: Option<Instant>,
    ) -> Result<P::Ret, CallError> {
        P::refuse_fds()?;
        let serial = self
            .admitted_call(P::PROGRAM, P::NUMBER, args, deadline)
            .await?;
        let span = tracing::debug_span!("libvirt.call", proc = P::NAME, serial);
        let payload = CallFuture {
            inner: &self.inner,
            serial,
            done: false,
        }
        .instrument(span)
        .await?;
        self.parse_reply::<P>(serial, payload)
    }

    /// Decode a reply outside the lock; the lock is taken only when it does not decode.
    fn parse_reply<P: Procedure>(&self, serial: u32, payload: Bytes) -> Result<P::Ret, CallError> {
        Connection::parse_reply::<P>(serial, payload).map_err(|v| {
            let mut st = self.inner.lock();
            let err = st.conn.handle_violation(v);
            st.dispatch();
            st.wake_driver();
            err
        })
    }

    /// Make a typed call of a procedure that passes file descriptors (its row has the `fds`
    /// column; a compile-time check): `fds` go with the call, and the reply's descriptors
    /// come back with its value (empty when it carried none).
    ///
    /// Only a unix socket carries descriptors; over TCP, TLS or SSH the call fails with
    /// [`CallError::FdPassingUnavailable`] before anything is sent. Descriptors are never
    /// leaked: those of a refused call are closed at once, and those of a reply whose future
    /// was dropped are closed when the reply arrives.
    ///
    /// ```no_run
    /// # async fn demo(client: libvirt_remote::Client, dom: libvirt_remote::proto::types::NonnullDomain)
    /// # -> Result<(), libvirt_remote::conn::CallError> {
    /// use libvirt_remote::proto::procs::domain::{DomainOpenGraphicsArgs, DomainOpenGraphicsFd};
    ///
    /// let args = DomainOpenGraphicsArgs { dom, idx: 0, flags: Default::default() };
    /// let ((), fds) = client.call_with_fds::<DomainOpenGraphicsFd>(&args, Vec::new()).await?;
    /// // fds[0]: a socket connected to the domain's first graphics device (VNC: "RFB 003.008")
    /// # Ok(()) }
    /// ```
    pub async fn call_with_fds<P: Procedure>(
        &self,
        args: &P::Args,
        fds: Vec<OwnedFd>,
    ) -> Result<(P::Ret, Vec<OwnedFd>), CallError> {
        const {
            assert!(
                P::FDS.is_some(),
                "call_with_fds: the procedure passes no descriptors"
            );
        };
        let (serial, result, fds) = self
            .fd_call(P::PROGRAM, P::NUMBER, P::NAME, args, fds)
            .await?;
        Ok((self.parse_reply::<P>(serial, result?)?, fds))
    }

    /// [`call_raw`](Self::call_raw) passing file descriptors: `fds` go with the call
    /// (`CALL_WITH_FDS`), the reply's descriptors (`REPLY_WITH_FDS`) come back with its
    /// payload. Unix sockets only, as [`call_with_fds`](Self::call_with_fds).
    pub async fn call_raw_with_fds(
        &self,
        program: u32,
        procedure: i32,
        args: &[u8],
        fds: Vec<OwnedFd>,
    ) -> Result<(Bytes, Vec<OwnedFd>), CallError> {
        let name = proto::procs::lookup(program, procedure).map_or("raw", |p| p.name);
        let (_, result, fds) = self
            .fd_call(program, procedure, name, &Preencoded(args), fds)
            .await?;
        Ok((result?, fds))
    }

    /// A call on the descriptor path: its serial, its result and the reply's descriptors.
    async fn fd_call(
        &self,
        program: u32,
        procedure: i32,
        name: &'static str,
        args: &(impl Encode + ?Sized),
        fds: Vec<OwnedFd>,
    ) -> Result<(u32, Result<Bytes, CallError>, Vec<OwnedFd>), CallError> {
        self.admitted(None).await?;
        let serial = {
            let mut st = self.inner.lock();
            let serial = st
                .conn
                .call_raw_with_fds(program, procedure, args, fds, None)?;
            st.calls.insert(serial, CallSlot::default());
            st.wake_driver();
            serial
        };
        let span = tracing::debug_span!("libvirt.call", proc = name, procedure, serial);
        let (result, fds) = WithFds(CallFuture {
            inner: &self.inner,
            serial,
            done: false,
        })
        .instrument(span)
        .await;
        Ok((serial, result, fds))
    }

    /// Call any procedure of any program with pre-encoded arguments; returns the raw reply
    /// payload. For the procedures the typed table does not cover.
    pub async fn call_raw(
        &self,
        program: u32,
        procedure: i32,
        args: &[u8],
    ) -> Result<Bytes, CallError> {
        self.raw(program, procedure, args, true).await
    }

    /// [`call_raw`](Self::call_raw) on the connection as it is, whatever the reconnect
    /// lifecycle says: the handshake of a redialled generation, which makes the link live.
    pub(crate) async fn call_raw_ungated(
        &self,
        program: u32,
        procedure: i32,
        args: &[u8],
    ) -> Result<Bytes, CallError> {
        self.raw(program, procedure, args, false).await
    }

    async fn raw(
        &self,
        program: u32,
        procedure: i32,
        args: &[u8],
        gated: bool,
    ) -> Result<Bytes, CallError> {
        let args = Preencoded(args);
        let serial = if gated {
            self.admitted_call(program, procedure, &args, None).await?
        } else {
            self.start_call(program, procedure, &args, None, false)?
                .expect("an ungated call is never held")
        };
        let name = proto::procs::lookup(program, procedure).map_or("raw", |p| p.name);
        let span = tracing::debug_span!("libvirt.call", proc = name, procedure, serial);
        CallFuture {
            inner: &self.inner,
            serial,
            done: false,
        }
        .instrument(span)
        .await
    }

    /// Queue a call once the reconnect lifecycle admits it: at once on a live link; while
    /// it is down, after the redial (up to `deadline`) or never, per the policy.
    async fn admitted_call(
        &self,
        program: u32,
        procedure: i32,
        args: &(impl Encode + ?Sized),
        deadline: Option<Instant>,
    ) -> Result<u32, CallError> {
        loop {
            if let Some(serial) = self.start_call(program, procedure, args, deadline, true)? {
                return Ok(serial);
            }
            self.admitted(deadline).await?;
        }
    }

    /// Resolves when the reconnect lifecycle admits a new call ([`Admission`]): at once on a
    /// live link (or without reconnect); while it is down, when the redial made it live, or
    /// with [`CallError::TimedOut`] at `deadline`, or with the error the policy gives
    /// (fail fast, or the link closed for good).
    pub(crate) async fn admitted(&self, deadline: Option<Instant>) -> Result<(), CallError> {
        let mut rx = self.inner.link_rx.clone();
        loop {
            // Seen before looking: a change after this look wakes the wait below.
            rx.borrow_and_update();
            match self.inner.lock().admit() {
                Admission::Go => return Ok(()),
                Admission::Fail(e) => return Err(e.into()),
                Admission::Wait => {}
            }
            let changed = match deadline {
                Some(d) => tokio::time::timeout_at(d.into(), rx.changed())
                    .await
                    .map_err(|_| CallError::TimedOut)?,
                None => rx.changed().await,
            };
            if changed.is_err() {
                return Err(crate::conn::ConnectionError::locally_closed("client dropped").into());
            }
        }
    }

    /// Queue a call (and write it, when the write rule gives this caller the turn). `None`:
    /// `gated` and the reconnect lifecycle says wait ([`admitted`](Self::admitted)).
    fn start_call(
        &self,
        program: u32,
        procedure: i32,
        args: &(impl Encode + ?Sized),
        deadline: Option<Instant>,
        gated: bool,
    ) -> Result<Option<u32>, CallError> {
        let mut st = self.inner.lock();
        if gated && st.link.is_some() {
            match st.admit() {
                Admission::Go => {}
                Admission::Wait => return Ok(None),
                Admission::Fail(e) => return Err(e.into()),
            }
        }
        // Only a call's own deadline can move the core's next timeout.
        let timer = deadline.map(|_| st.conn.poll_timeout());
        let serial = st.conn.call_raw(program, procedure, args, deadline)?;
        st.calls.insert(serial, CallSlot::default());
        // Alone on the connection, a call goes out from here (`direct`); with others in flight
        // the driver batches the calls their just-completed callers send (the core's write
        // rule: `conn::Writer`).
        let wrote = st.conn.write_turn() == WriteTurn::Caller && direct::write(&mut st);
        let spin = match &mut st.spin {
            Some(policy) if wrote => {
                policy.sent(Instant::now());
                // A caller writes only a lone call (`pending_calls() == 1` above).
                policy.spin(1)
            }
            _ => false,
        };
        // The driver is needed to write what we could not, to re-arm its timer for a new
        // deadline, or to busy-poll for the reply; otherwise it sleeps until the reply.
        if !wrote || spin || timer.is_some_and(|t| st.conn.poll_timeout() != t) {
            st.wake_driver();
        }
        Ok(Some(serial))
    }
}

/// Waits for one call's completion; forgets the call when dropped early.
pub(crate) struct CallFuture<'a> {
    pub(crate) inner: &'a Arc<Inner>,
    pub(crate) serial: u32,
    pub(crate) done: bool,
}

impl CallFuture<'_> {
    /// The reply and the descriptors that came with it.
    fn poll_reply(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<(Result<Bytes, CallError>, Vec<OwnedFd>)> {
        let mut st = self.inner.lock();
        let slot = st
            .calls
            .get_mut(&self.serial)
            .expect("slot lives until the future ends");
        if let Some(r) = slot.result.take() {
            let fds = st
                .calls
                .remove(&self.serial)
                .map(|s| s.fds)
                .unwrap_or_default();
            drop(st);
            self.done = true;
            return Poll::Ready((r.map_err(|e| *e), fds));
        }
        slot.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Future for CallFuture<'_> {
    type Output = Result<Bytes, CallError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.poll_reply(cx).map(|(r, _)| r)
    }
}

/// A [`CallFuture`] that also yields the reply's descriptors (dropping it early closes
/// them, with the slot they wait in).
struct WithFds<'a>(CallFuture<'a>);

impl Future for WithFds<'_> {
    type Output = (Result<Bytes, CallError>, Vec<OwnedFd>);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.0.poll_reply(cx)
    }
}

impl Drop for CallFuture<'_> {
    fn drop(&mut self) {
        if !self.done {
            let mut st = self.inner.lock();
            st.calls.remove(&self.serial);
            st.conn.forget_call(self.serial);
        }
    }
}
