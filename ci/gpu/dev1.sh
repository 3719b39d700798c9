set +e
T=./gpu-bundle/touchstone
R="bash gpu-bundle/run.sh"
$R $T repro 'q8ta_linear/M=5,K=70,N=9,impl=coopmat/int8/buffer/seed=2' --backend vulkan 2>&1 | tail -4
$R $T repro 'sdpa/S=3,Hq=4,Hkv=2,D=20,pos=5,impl=coopmat/float16/buffer/seed=2' --backend vulkan 2>&1 | tail -4
$R $T check --op q8ta_linear --backend vulkan --match impl=coopmat --cases 400 > $OUT/check_q8.txt 2>&1; echo "q8 rc=$?"
$R $T check --op sdpa --dtype float16 --backend vulkan --match impl=coopmat --cases 400 > $OUT/check_sdpa.txt 2>&1; echo "sdpa rc=$?"
grep -E "^(q8ta_linear|sdpa)/|FAIL|ERROR" $OUT/check_q8.txt $OUT/check_sdpa.txt | head -30
$R $T bench --op q8ta_linear,sdpa --backend vulkan --match 'impl=(coopmat|tiled)' --time-ms 300 > $OUT/bench.txt 2>&1; echo "bench rc=$?"
grep -E "copy|GEMM|prefill|% peak" $OUT/bench.txt | head -20
