set +e
T=./gpu-bundle/touchstone
R="bash gpu-bundle/run.sh"
$R $T repro 'sdpa/S=3,Hq=4,Hkv=2,D=20,pos=5,impl=coopmat/float16/buffer/seed=2' --backend vulkan 2>&1 | tail -4
$R $T check --op q8ta_linear --backend vulkan --match impl=coopmat --cases 1000 > $OUT/check_q8.txt 2>&1; echo "q8 rc=$?"
$R $T check --op sdpa --dtype float16 --backend vulkan --match impl=coopmat --cases 1000 > $OUT/check_sdpa.txt 2>&1; echo "sdpa rc=$?"
grep -E "^(q8ta_linear|sdpa)/|^  (FAIL|ERROR)|repro" $OUT/check_q8.txt $OUT/check_sdpa.txt | head -20
$R $T bench --op q8ta_add,q8ta_linear,q8ta_conv2d --time-ms 300 > $OUT/bench_int8.txt 2>&1; echo "bench int8 rc=$?"
$R $T bench --op sdpa --match 'S=512' --time-ms 300 > $OUT/bench_sdpa.txt 2>&1; echo "bench sdpa rc=$?"
grep -E "copy 512|^q8ta|^sdpa" $OUT/bench_int8.txt $OUT/bench_sdpa.txt | cut -c1-200 | head -40
$R ./gpu-bundle/touchstone_tests --gtest_filter='*Coopmat*:PrecisionBugs.EachIsCaughtByTheDefaultSweep/0:*Q8taFastPath*:PrecisionBugs.TheDefaultSweepReachesTheInt8FastPaths*' > $OUT/tests.txt 2>&1; echo "tests rc=$?"
grep -E "coopmat|FAILED|PASSED|OK \]" $OUT/tests.txt | head -20
