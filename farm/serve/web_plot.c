/* web_plot.c: the error/bound plot of a run as inline SVG: one column of points per
 * case, one colour per machine/cell, the bound at 1.0 as a line. Every point carries a
 * <title> (the browser's tooltip, no script); text uses the generic sans-serif family
 * (no font is fetched). A ratio above the top of the scale sits on it as a triangle. */
#include "serve/web_internal.h"

#include <math.h>
#include <string.h>

#define PLOT_W 760
#define PLOT_H 260
#define LEFT   56
#define BOTTOM 40
#define TOP    16

static const char *const COLOURS[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                      "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
#define NCOLOURS (sizeof COLOURS / sizeof COLOURS[0])

/* The scale's top: at least the bound (1.0) with space above, at most 4 (beyond, a mark). */
static double plot_top(const cJSON *ratios) {
    double top = 1.25;
    const cJSON *col, *r;
    cJSON_ArrayForEach(col, ratios) {
        cJSON_ArrayForEach(r, col) {
            if (r->valuedouble * 1.1 > top) top = r->valuedouble * 1.1;
        }
    }
    return top > 4 ? 4 : top;
}

static void axes(FILE *out, double top) {
    int h = PLOT_H - BOTTOM - TOP;
    const char *line = "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\" />";
    fprintf(out, line, LEFT, TOP, LEFT, TOP + h);
    fprintf(out, line, LEFT, TOP + h, PLOT_W - 8, TOP + h);
    for (int i = 0; i <= 4; i++) {
        double v = top * i / 4;
        double y = TOP + h - h * v / top;
        fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.2f</text>",
                LEFT - 4, y + 4, v);
    }
    double y1 = TOP + h - h / top;
    fprintf(out,
            "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#d62728\" "
            "stroke-dasharray=\"6 4\" />"
            "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" fill=\"#d62728\">"
            "bound (error/bound = 1)</text>",
            LEFT, y1, PLOT_W - 8, y1, LEFT + 6, y1 - 4);
    fprintf(out,
            "<text x=\"12\" y=\"%d\" font-size=\"11\" transform=\"rotate(-90 12 %d)\" "
            "text-anchor=\"middle\">error / bound</text>",
            TOP + h / 2, TOP + h / 2);
}

void web_plot_svg(FILE *out, const cJSON *report) {
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(report, "cases");
    const cJSON *ratios = cJSON_GetObjectItemCaseSensitive(report, "ratios");
    const cJSON *columns = cJSON_GetObjectItemCaseSensitive(report, "columns");
    int ncases = cJSON_GetArraySize(cases), h = PLOT_H - BOTTOM - TOP;
    int legend = 18 * (cJSON_GetArraySize(columns) + 1);
    double top = plot_top(ratios), step = (PLOT_W - LEFT - 16.0) / (ncases > 0 ? ncases : 1);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" role=\"img\" "
            "aria-label=\"error over bound per case and machine/cell\">",
            PLOT_W, PLOT_H + legend, PLOT_W, PLOT_H + legend);
    axes(out, top);
    const cJSON *row, *col;
    int i = 0;
    cJSON_ArrayForEach(row, cases) {
        double x = LEFT + step * (i + 0.5);
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%d</text>",
                x, TOP + h + 14, i + 1);
        int k = 0;
        cJSON_ArrayForEach(col, columns) {
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(ratios, col->valuestring), json_str(row, "case"));
            const char *colour = COLOURS[k % NCOLOURS];
            double dx = x + (k - cJSON_GetArraySize(columns) / 2.0) * 4;
            k++;
            if (!cJSON_IsNumber(r)) continue;
            double v = r->valuedouble, y = TOP + h - h * (v > top ? top : v) / top;
            if (v > top)
                fprintf(out, "<path d=\"M%.1f %.1f l-5 9 l10 0 z\" fill=\"%s\">", dx, y, colour);
            else
                fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\">", dx, y, colour);
            fprintf(out, "<title>");
            web_esc(out, json_str(row, "case"));
            fprintf(out, " on ");
            web_esc(out, col->valuestring);
            fprintf(out, ": error/bound %.4g</title></%s>", v, v > top ? "path" : "circle");
        }
        i++;
    }
    fprintf(out,
            "<text x=\"%d\" y=\"%d\" font-size=\"11\">case number (as in the matrix above); "
            "one colour per machine/cell:</text>",
            LEFT, PLOT_H - 8);
    int k = 0;
    cJSON_ArrayForEach(col, columns) {
        int y = PLOT_H + 10 + 18 * k;
        fprintf(out,
                "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"%s\" />"
                "<text x=\"%d\" y=\"%d\" font-size=\"11\">",
                LEFT + 6, y, COLOURS[k % NCOLOURS], LEFT + 16, y + 4);
        web_esc(out, col->valuestring);
        fprintf(out, "</text>");
        k++;
    }
    fprintf(out, "</svg>");
}
