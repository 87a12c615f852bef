//! The orphan policy on Windows: the child is assigned to a Job Object of
//! its own, created with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, so whatever
//! it starts is in the job too and ends with it. Windows has no SIGTERM
//! for a process without a console of ours: "terminate" and "kill" both
//! end the whole job (`TerminateJobObject`).
//!
//! The child is assigned right after it is started: a process it starts in
//! that moment (before the assignment) is outside the job. Without a job
//! (the assignment failed: said once in a warning) only the leader is
//! ended.

use std::os::windows::io::{AsHandle, AsRawHandle, FromRawHandle, OwnedHandle};
use std::os::windows::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus};

use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation,
    QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::TerminateProcess;

/// The exit code of processes ended by [`Group::kill`] (as Python's
/// `Popen.terminate` gives).
const KILLED: u32 = 1;

/// Nothing to set: the job is made once the child runs.
pub(super) fn configure(_cmd: &mut Command) {}

/// The Job Object holding a freshly spawned child and what it starts.
#[derive(Debug)]
pub(super) struct Group {
    /// `None` when the child could not be assigned to a job.
    job: Option<OwnedHandle>,
    /// The leader's own handle: while it is open the process object, and so
    /// its id, stays the leader's even after it exits.
    leader: OwnedHandle,
}

impl Group {
    pub(super) fn new(child: &Child) -> std::io::Result<Self> {
        let leader = child.as_handle().try_clone_to_owned()?;
        let job = match job_for(&leader) {
            Ok(job) => Some(job),
            Err(e) => {
                tracing::warn!(
                    pid = child.id(),
                    error = %e,
                    "a child could not be put in a Job Object; only it (not what it starts) \
                     is ended with it"
                );
                None
            }
        };
        Ok(Self { job, leader })
    }

    /// Ends the whole job: Windows has no gentler signal for it.
    pub(super) fn terminate(&self) {
        self.kill();
    }

    /// Ends every process in the job (without a job, the leader).
    pub(super) fn kill(&self) {
        match &self.job {
            // SAFETY: a job handle we own.
            Some(job) => unsafe {
                TerminateJobObject(job.as_raw_handle(), KILLED);
            },
            None => self.kill_leader(),
        }
    }

    /// Ends the leader alone.
    pub(super) fn kill_leader(&self) {
        // SAFETY: a process handle we own (a no-op once it exited).
        unsafe { TerminateProcess(self.leader.as_raw_handle(), KILLED) };
    }

    /// Whether a process of the job still runs; without a job, nothing that
    /// the leader started can be seen.
    pub(super) fn has_live_members(&self) -> bool {
        let Some(job) = &self.job else {
            return false;
        };
        let mut info = JOBOBJECT_BASIC_ACCOUNTING_INFORMATION::default();
        // SAFETY: `info` is the structure this class fills, of the size given.
        let ok = unsafe {
            QueryInformationJobObject(
                job.as_raw_handle(),
                JobObjectBasicAccountingInformation,
                (&raw mut info).cast(),
                size_of_u32::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>(),
                std::ptr::null_mut(),
            )
        };
        // Unknown counts as running, so that the callers kill.
        ok == 0 || info.ActiveProcesses > 0
    }

    /// Ends the job when the reaper thread could not be started; the
    /// handles, closed on drop, release the rest.
    pub(super) fn kill_and_reap(&self) {
        self.kill();
    }
}

/// A new job that kills its processes when its last handle closes, with
/// `leader` in it.
fn job_for(leader: &OwnedHandle) -> std::io::Result<OwnedHandle> {
    // SAFETY: no attributes (the handle is not inherited), no name.
    let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if raw.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh handle owned by nobody else.
    let job = unsafe { OwnedHandle::from_raw_handle(raw) };
    let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: `limits` is the structure this class reads, of the size given.
    let set = unsafe {
        SetInformationJobObject(
            job.as_raw_handle(),
            JobObjectExtendedLimitInformation,
            (&raw const limits).cast(),
            size_of_u32::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>(),
        )
    };
    if set == 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both handles are ours and open.
    if unsafe { AssignProcessToJobObject(job.as_raw_handle(), leader.as_raw_handle()) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(job)
}

fn size_of_u32<T>() -> u32 {
    u32::try_from(std::mem::size_of::<T>()).expect("a small structure")
}

/// Windows has no signals: `None`.
pub(super) fn exit_signal(_status: &ExitStatus) -> Option<i32> {
    None
}

/// What is reported when the status was lost: exit code `u32::MAX` (-1).
pub(super) fn unknown_status() -> ExitStatus {
    ExitStatus::from_raw(u32::MAX)
}
