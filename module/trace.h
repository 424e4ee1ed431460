/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace events vmamerge:*, one per decision the module makes.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vmamerge

#if !defined(_VMAMERGE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _VMAMERGE_TRACE_H

#include <linux/tracepoint.h>
#include <linux/mm_types.h>

#include "vmamerge.h"
#include "page_rewrite.h"

/*
 * path, cause and reason are ints in the ring buffer (the raw layout that
 * tools read) and print as names.  The names come from the lists next to
 * the enums (VMAMERGE_PATHS, VMAMERGE_CAUSES in vmamerge.h,
 * VMAMERGE_REFUSALS in page_rewrite.h), never from a copy here.
 *
 * TRACE_DEFINE_ENUM: the event's format file (what trace-cmd, perf and
 * libtraceevent parse) shows the print format as written, with the enum
 * names in the symbol tables; exporting each value lets the kernel put the
 * numbers there instead, which user space can evaluate.  These are
 * file-scope declarations and need their semicolon: VMAMERGE_DECLS() only
 * keeps checkpatch from taking the X-macros for statement macros that end
 * in one (the kernel's own include/trace/events/ lists write them bare).
 */
#define VMAMERGE_DECLS(decls)	decls
#define VMAMERGE_TRACE_PATH_(id, name)					\
	VMAMERGE_DECLS(TRACE_DEFINE_ENUM(VMAMERGE_PATH_##id);)
#define VMAMERGE_TRACE_CAUSE_(id, name)					\
	VMAMERGE_DECLS(TRACE_DEFINE_ENUM(VMAMERGE_CAUSE_##id);)
#define VMAMERGE_TRACE_REFUSAL_(id, name)				\
	VMAMERGE_DECLS(TRACE_DEFINE_ENUM(VMAMERGE_R_##id);)
VMAMERGE_PATHS(VMAMERGE_TRACE_PATH_)
VMAMERGE_CAUSES(VMAMERGE_TRACE_CAUSE_)
VMAMERGE_REFUSALS(VMAMERGE_TRACE_REFUSAL_)
#undef VMAMERGE_TRACE_PATH_
#undef VMAMERGE_TRACE_CAUSE_
#undef VMAMERGE_TRACE_REFUSAL_

/*
 * The __print_symbolic() tables.  Each entry brings its own leading comma
 * (the lists have no separate form for their last entry, and
 * __print_symbolic() appends its terminator after a comma of its own), so
 * vmamerge_symbolic() puts the table right after the value, without one.
 */
#define VMAMERGE_SYM_PATH_(id, name)					\
	, { VMAMERGE_PATH_##id, name }
#define VMAMERGE_SYM_CAUSE_(id, name)					\
	, { VMAMERGE_CAUSE_##id, name }
#define VMAMERGE_SYM_REFUSAL_(id, name)					\
	, { VMAMERGE_R_##id, name }
#define vmamerge_symbolic(value, table)	__print_symbolic(value table)
#define vmamerge_show_path(path)					\
	vmamerge_symbolic(path, VMAMERGE_PATHS(VMAMERGE_SYM_PATH_))
#define vmamerge_show_cause(cause)					\
	vmamerge_symbolic(cause, VMAMERGE_CAUSES(VMAMERGE_SYM_CAUSE_))
#define vmamerge_show_reason(reason)					\
	vmamerge_symbolic(reason, VMAMERGE_REFUSALS(VMAMERGE_SYM_REFUSAL_))

/* A merge attempt on an active mm and what the kernel decided. */
TRACE_EVENT(vmamerge_merge,
	TP_PROTO(struct mm_struct *mm, int path, unsigned long start,
		 unsigned long end, unsigned long pgoff, int cause,
		 bool merged),
	TP_ARGS(mm, path, start, end, pgoff, cause, merged),
	TP_STRUCT__entry(
		__field(struct mm_struct *, mm)
		__field(int, path)
		__field(unsigned long, start)
		__field(unsigned long, end)
		__field(unsigned long, pgoff)
		__field(int, cause)
		__field(bool, merged)
	),
	TP_fast_assign(
		__entry->mm = mm;
		__entry->path = path;
		__entry->start = start;
		__entry->end = end;
		__entry->pgoff = pgoff;
		__entry->cause = cause;
		__entry->merged = merged;
	),
	TP_printk("mm=%p path=%s range=%#lx-%#lx pgoff=%#lx cause=%s merged=%d",
		  __entry->mm, vmamerge_show_path(__entry->path),
		  __entry->start, __entry->end, __entry->pgoff,
		  vmamerge_show_cause(__entry->cause), __entry->merged)
);

/* A merge the module could have enabled but refused, and why. */
TRACE_EVENT(vmamerge_refuse,
	TP_PROTO(struct mm_struct *mm, int path, unsigned long start,
		 unsigned long end, int reason),
	TP_ARGS(mm, path, start, end, reason),
	TP_STRUCT__entry(
		__field(struct mm_struct *, mm)
		__field(int, path)
		__field(unsigned long, start)
		__field(unsigned long, end)
		__field(int, reason)
	),
	TP_fast_assign(
		__entry->mm = mm;
		__entry->path = path;
		__entry->start = start;
		__entry->end = end;
		__entry->reason = reason;
	),
	TP_printk("mm=%p path=%s range=%#lx-%#lx reason=%s",
		  __entry->mm, vmamerge_show_path(__entry->path),
		  __entry->start, __entry->end,
		  vmamerge_show_reason(__entry->reason))
);

/* Renumbering or transplanting the pages of one VMA. */
TRACE_EVENT(vmamerge_rewrite,
	TP_PROTO(struct mm_struct *mm, unsigned long start, unsigned long end,
		 unsigned long old_pgoff, unsigned long new_pgoff,
		 bool transplant, unsigned long pages),
	TP_ARGS(mm, start, end, old_pgoff, new_pgoff, transplant, pages),
	TP_STRUCT__entry(
		__field(struct mm_struct *, mm)
		__field(unsigned long, start)
		__field(unsigned long, end)
		__field(unsigned long, old_pgoff)
		__field(unsigned long, new_pgoff)
		__field(bool, transplant)
		__field(unsigned long, pages)
	),
	TP_fast_assign(
		__entry->mm = mm;
		__entry->start = start;
		__entry->end = end;
		__entry->old_pgoff = old_pgoff;
		__entry->new_pgoff = new_pgoff;
		__entry->transplant = transplant;
		__entry->pages = pages;
	),
	TP_printk("mm=%p range=%#lx-%#lx pgoff %#lx->%#lx transplant=%d pages=%lu",
		  __entry->mm, __entry->start, __entry->end,
		  __entry->old_pgoff, __entry->new_pgoff, __entry->transplant,
		  __entry->pages)
);

/* A change of a process's opt-in state through the control plane. */
TRACE_EVENT(vmamerge_optin,
	TP_PROTO(struct mm_struct *mm, pid_t pid, bool enabled, bool exec_keep),
	TP_ARGS(mm, pid, enabled, exec_keep),
	TP_STRUCT__entry(
		__field(struct mm_struct *, mm)
		__field(pid_t, pid)
		__field(bool, enabled)
		__field(bool, exec_keep)
	),
	TP_fast_assign(
		__entry->mm = mm;
		__entry->pid = pid;
		__entry->enabled = enabled;
		__entry->exec_keep = exec_keep;
	),
	TP_printk("mm=%p pid=%d enabled=%d exec_keep=%d", __entry->mm,
		  __entry->pid, __entry->enabled, __entry->exec_keep)
);

#endif /* _VMAMERGE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
