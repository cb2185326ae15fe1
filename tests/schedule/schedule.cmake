# How ctest schedules the CPU suite (scripts/test.sh), read by ctest itself (tests/schedule adds it
# to TEST_INCLUDE_FILES), so it may name tests that gtest_discover_tests lists only at build time.
#
# COST: seconds of the test on the 2-core CPU machine, under `ctest -j2` (bench/RESULTS.md,
# 2026-12-06). ctest starts the costliest first; with no history of its own (a clean CI machine,
# no Testing/Temporary/CTestCostData.txt) it knows them only from here, and a 250 s test started
# last is a 250 s tail. Where ctest has a history, the history wins.
# A name here that no longer exists is ignored by ctest: keep the list in step when renaming.
set(_kbv_costs
  "shared_builds.empty" 1000  # a fixture others wait on: first, though it takes no time
  "Attacks.EveryAttackEndsAsItsOwnRecordedOutcome" 260
  "RunCli/RunCliPch.LoadInlineBuildsUseThePrecompiledTorchHeader/BuildsWaitForIt" 230
  "RunCli/RunCliPch.LoadInlineBuildsUseThePrecompiledTorchHeader/MadeBesideTheBuilds" 210
  "DeviceFreeBuild.ACudaSourceThatNeedsTorchExtensionHIsCompiledAsWritten" 130
  "suite.audit_small_cpu" 115
  "DeviceFreeBuild.TheLeanPreludeCanBeTurnedOffForMeasuring" 85
  "python.traps" 80
  "DeviceFreeBuild.ACudaExtensionBuildsForTheGivenArchitectureWithNoGpu" 78
  "DeviceFreeBuild.ACudaSourceThatNeedsTorchTypesHIsCompiledWithIt" 73
  "RunCli.SigkillHalfwayThenResumeCompletesWithoutDuplicates" 67
  "EvalCli.SameExtensionNameDoesNotCollide" 67
  "DeviceFreeBuild.ACudaSourceThatDoesNotCompileSaysWhatNvccSaid" 64
  "python.api" 62
  "RunCli.OneSandboxServesEveryProtocolWithTheSameVerdicts" 54
  "Distributions.SparseSpikeRarelyLetsAHalfSampledMeanPass" 50
  "StrictCli.RunAndEvalGiveTheSameVerdictClass" 40
  "Numerics.AnHonestReorderingPassesStrict" 36
  "JudgeEvidence.AnHonestExtensionIsStillACustomKernel" 32
  "RunCli.JudgesStartedAheadGiveTheSameVerdicts" 32
  "TorchCompileBaseline.IsTimedAsAnExtraSeriesWithItsCompileTimeApart" 32
  "StrictCli.StrictDistributionsDiscriminateReLU" 30
  "EvalCli.StaleBuildLockFromAKilledBuildDoesNotHang" 30
  "StrictCli.TimeBelowThePhysicalBoundIsImplausibleSpeed" 30
  "RunCli.ATimeoutInALaterProtocolLeavesTheEarlierVerdicts" 30
  "RunProtocols.AJudgeThatDoesNotExitAfterItsVerdictsIsKilledAndTheVerdictsKept" 30
  "EvalCli.AForeignPythonInTheEnvironmentChangesNothing" 30
  "StrictCli.AReductionThatSamplesItsTermsFailsOnSparseSpikes" 30
  "StrictCli.HonestShapeSpecialisationGetsNoIntegrityFlag" 28
  "RunCli.WarmBuildCacheSkipsTheBuildWorkers" 27
  "EvalCli.CompileErrorKeepsTheCompilerLog" 26
  "DeviceFreeBuild/DeviceFreeNeedsDevice.IsNoVerdict/relu_ext_init_raises" 25
  "DeviceFreeBuild.AnExtensionThatDoesNotCompileIsACompileError" 22
  "StrictCli.BurnerProcessesDoNotSlowTheBaseline" 21
  "GenerateCli.GeneratedRunIsEvaluatedByKbvRunUnchanged" 17
  "python.install" 15
  "Numerics.StandardKeepsKernelBenchsElementWiseRule" 15
  "JudgeWatchdog.AJudgeHeldAfterTheCandidateEndedReportsWithoutWaitingOut" 14
  "JudgeWatchdog.AProtocolCaughtBeforeTheHoldKeepsItsVerdict" 14
  "EvalCli.HangBecomesTimeoutInItsStage" 14
)
list(LENGTH _kbv_costs _kbv_n)
math(EXPR _kbv_last "${_kbv_n} - 1")
foreach(_kbv_i RANGE 0 ${_kbv_last} 2)
  math(EXPR _kbv_j "${_kbv_i} + 1")
  list(GET _kbv_costs ${_kbv_i} _kbv_name)
  list(GET _kbv_costs ${_kbv_j} _kbv_cost)
  set_tests_properties("${_kbv_name}" PROPERTIES COST ${_kbv_cost})
endforeach()

# The tests that share tests/shared-builds (kbv_cli.hpp, shared_build_dir()): after the fixture
# that empties it, and one at a time (none waits on the cache entry another is building). ctest
# starts them before the rest: the fixture's cleanup depends on them, which puts them a dependency
# level above every other test.
foreach(_kbv_name
    "StrictCli.HonestShapeSpecialisationGetsNoIntegrityFlag"
    "StrictCli.StrictDistributionsDiscriminateReLU"
    "StrictCli.TimeBelowThePhysicalBoundIsImplausibleSpeed"
    "EvalCli.SameExtensionNameDoesNotCollide"
    "EvalCli.StaleBuildLockFromAKilledBuildDoesNotHang"
    "JudgeEvidence.AnHonestExtensionIsStillACustomKernel")
  set_tests_properties("${_kbv_name}" PROPERTIES FIXTURES_REQUIRED kbv_shared_builds RESOURCE_LOCK kbv_shared_builds)
endforeach()
