#pragma once
// One (problem, candidate) evaluation, stage by stage, inside the worker process. Every failure
// of the problem or the candidate becomes an Outcome with a reason in the returned verdict;
// only bugs of kbv itself escape as exceptions.
#include "core/job.hpp"
#include "core/verdict.hpp"
#include "worker/report_channel.hpp"

namespace kbv::worker {

Verdict evaluate(const WorkerJob& job, ReportChannel& channel);

}  // namespace kbv::worker
