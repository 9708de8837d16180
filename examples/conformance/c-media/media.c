/*
 * c-media: the C half of wasmcp's fixtures for the official MCP conformance
 * suite, written against sdk/c/wasmcp.h. It serves the binary content:
 *
 *   tools     test_image_content, test_audio_content,
 *             test_multiple_content_types
 *   resource  test://static-binary (a PNG)
 *   prompt    test_prompt_with_image
 *
 * The image is a 1x1 red PNG; the audio is a WAV file the plugin synthesises
 * on each call (100 ms of a 440 Hz triangle wave, 8 kHz, 16-bit mono).
 */
#define WASMCP_IMPLEMENTATION
#include "wasmcp.h"

#include <string.h>

/* A 1x1 red pixel, RGBA. */
static const unsigned char png[] = {
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
	0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00,
	0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0,
	0x1f, 0x00, 0x05, 0x05, 0x02, 0x00, 0x5f, 0xc8, 0xf1, 0xd2, 0x00, 0x00,
	0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};

enum {
	RATE = 8000,                 /* samples per second */
	TONE = 440,                  /* Hz */
	SAMPLES = RATE / 10,         /* 100 ms */
	WAV_SIZE = 44 + 2 * SAMPLES, /* RIFF header + 16-bit samples */
};

static void le16(unsigned char *p, uint32_t v) {
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void le32(unsigned char *p, uint32_t v) {
	le16(p, v);
	le16(p + 2, v >> 16);
}

/* wav writes a canonical PCM WAV file of WAV_SIZE bytes into out. */
static void wav(unsigned char out[WAV_SIZE]) {
	memcpy(out, "RIFF", 4);
	le32(out + 4, WAV_SIZE - 8);
	memcpy(out + 8, "WAVEfmt ", 8);
	le32(out + 16, 16);       /* fmt chunk size */
	le16(out + 20, 1);        /* PCM */
	le16(out + 22, 1);        /* mono */
	le32(out + 24, RATE);     /* sample rate */
	le32(out + 28, RATE * 2); /* byte rate */
	le16(out + 32, 2);        /* block align */
	le16(out + 34, 16);       /* bits per sample */
	memcpy(out + 36, "data", 4);
	le32(out + 40, 2 * SAMPLES);
	for (int i = 0; i < SAMPLES; i++) {
		/* Triangle wave: phase in [0, RATE) per period of 1/TONE s. */
		int32_t phase = (int32_t)((int64_t)i * TONE % RATE);
		int32_t tri = phase < RATE / 2 ? 4 * phase - RATE : 3 * RATE - 4 * phase; /* [-RATE, RATE] */
		int16_t s = (int16_t)(tri * 8000 / RATE);
		le16(out + 44 + 2 * i, (uint16_t)s);
	}
}

static void image_content(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	wasmcp_image(ctx, png, sizeof png, "image/png");
}

static void audio_content(wasmcp_ctx *ctx, wasmcp_json args) {
	static unsigned char buf[WAV_SIZE];
	(void)args;
	wav(buf);
	wasmcp_audio(ctx, buf, sizeof buf, "audio/wav");
}

static const char mixed_resource[] =
	"{\"type\":\"resource\",\"resource\":{\"uri\":\"test://mixed-content-resource\","
	"\"mimeType\":\"application/json\",\"text\":\"{\\\"test\\\":\\\"data\\\",\\\"value\\\":123}\"}}";

static void multiple_content_types(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	wasmcp_textz(ctx, "Multiple content types test:");
	wasmcp_image(ctx, png, sizeof png, "image/png");
	wasmcp_item_raw(ctx, mixed_resource, sizeof mixed_resource - 1);
}

static void static_binary(wasmcp_ctx *ctx, const char *uri) {
	wasmcp_resource_blob(ctx, uri, "image/png", png, sizeof png);
}

/* prompt_with_image: a user message with the image, then one with text. */
static void prompt_with_image(wasmcp_ctx *ctx, wasmcp_json args) {
	(void)args;
	wasmcp_prompt_image(ctx, "user", png, sizeof png, "image/png");
	wasmcp_prompt_message(ctx, "user", "Please analyze the image above.");
}

#define NO_ARGS "{\"type\":\"object\",\"properties\":{}}"

static const wasmcp_tool tools[] = {
	{"test_image_content", "Returns a PNG image.", NO_ARGS, NULL, NULL, image_content},
	{"test_audio_content", "Returns a short WAV tone.", NO_ARGS, NULL, NULL, audio_content},
	{"test_multiple_content_types", "Returns text, an image and an embedded JSON resource.", NO_ARGS, NULL, NULL,
	 multiple_content_types},
};

static const wasmcp_resource resources[] = {
	{"test://static-binary", "static-binary", "A static binary resource (a PNG image).", "image/png", static_binary},
};

static const wasmcp_prompt prompts[] = {
	{"test_prompt_with_image", "A prompt with an image.", NULL, prompt_with_image},
};

static const wasmcp_plugin plugin = {
	.name = "media",
	.version = "1.0.0",
	.description = "Fixtures of the MCP conformance suite (C half): images, audio and a binary resource.",
	.tools = tools,
	.n_tools = WASMCP_COUNT(tools),
	.resources = resources,
	.n_resources = WASMCP_COUNT(resources),
	.prompts = prompts,
	.n_prompts = WASMCP_COUNT(prompts),
};

WASMCP_PLUGIN(plugin)
