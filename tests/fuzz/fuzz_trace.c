/*
 * libFuzzer target: any bytes as a trace file. The reader must accept them
 * or reject them with an error, never crash; what it accepts must go
 * through the analysis, the event agreement rules and the Chrome export.
 */
#include <cuproof/internal/tracefile.h>
#include <cuproof/internal/perfetto.h>
#include <cuproof/agreement.h>
#include <cuproof/metrics.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cp_trace_file f;
    if (cp_trace_file_parse(text, &f) == 0) {
        for (size_t i = 0; i < f.nvariants; i++) {
            cp_metrics m;
            if (cp_timeline_analyse(&f.variants[i].trace, NULL, &m) == 0)
                cp_metrics_free(&m);
            for (size_t k = 0; k < f.variants[i].nseries; k++) {
                cp_event_agreement a;
                cp_events_against_trace(&f.variants[i].trace, "mult_ker", f.variants[i].series[k].values,
                                        f.variants[i].series[k].n, CP_EVENT_TOLERANCE, &a);
            }
            free(cp_chrome_trace(&f.variants[i].trace, f.case_name));
        }
        cp_trace_file_free(&f);
    }
    free(text);
    return 0;
}
