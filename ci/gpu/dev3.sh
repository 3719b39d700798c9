set +e
T=./gpu-bundle/touchstone
R="bash gpu-bundle/run.sh"
$R $T bench --op q8ta_linear,sdpa --match 'M=256.*impl=coopmat|S=512.*impl=coopmat' --backend vulkan --time-ms 300 > $OUT/b_base.txt 2>&1
TS_COOPMAT_PLAIN=1 $R $T bench --op q8ta_linear,sdpa --match 'M=256.*impl=coopmat|S=512.*impl=coopmat' --backend vulkan --time-ms 300 > $OUT/b_plain.txt 2>&1
$R $T bench --op q8ta_linear,q8ta_add --match 'M=1,|q8ta_add' --time-ms 300 > $OUT/b_gemv.txt 2>&1
grep -E "copy 512|^sdpa|^q8ta" $OUT/b_*.txt | cut -c1-200
