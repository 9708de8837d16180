package mcp

// Protocol versions the engine speaks.
const (
	version20241105 = "2024-11-05"
	version20250326 = "2025-03-26" // the only version with JSON-RPC batches
	version20250618 = "2025-06-18"
	version20251125 = "2025-11-25" // latest legacy (initialize-based) version
	version20260728 = "2026-07-28" // stateless ("modern") version
)

// supportedVersionsJSON lists every version, newest first, as
// server/discover and -32022 errors report them.
const supportedVersionsJSON = `["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`

// isLegacyVersion reports whether v is one of the initialize-based versions.
func isLegacyVersion(v string) bool {
	switch v {
	case version20241105, version20250326, version20250618, version20251125:
		return true
	}
	return false
}

// isSupportedVersion reports whether v is any version the engine speaks.
func isSupportedVersion(v string) bool { return v == version20260728 || isLegacyVersion(v) }

// negotiate picks the legacy version to answer initialize with: the
// client's own when the engine speaks it, else the latest legacy version.
func negotiate(clientVersion string) string {
	if isLegacyVersion(clientVersion) {
		return clientVersion
	}
	return version20251125
}

// Reserved _meta keys of 2026-07-28.
const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaClientCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo      = "io.modelcontextprotocol/clientInfo"
	metaLogLevel        = "io.modelcontextprotocol/logLevel"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID  = "io.modelcontextprotocol/subscriptionId"
)

// logLevels are the RFC 5424 level names in increasing severity.
var logLevels = [...]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// logLevelIndex returns the severity of an MCP level name, or -1.
func logLevelIndex(name string) int32 {
	for i, n := range logLevels {
		if n == name {
			return int32(i)
		}
	}
	return -1
}

// Method names.
const (
	methodInitialize   = "initialize"
	methodPing         = "ping"
	methodSetLevel     = "logging/setLevel"
	methodSubscribe    = "resources/subscribe"
	methodUnsubscribe  = "resources/unsubscribe"
	methodToolsList    = "tools/list"
	methodToolsCall    = "tools/call"
	methodResList      = "resources/list"
	methodResTemplates = "resources/templates/list"
	methodResRead      = "resources/read"
	methodPromptsList  = "prompts/list"
	methodPromptsGet   = "prompts/get"
	methodComplete     = "completion/complete"
	methodDiscover     = "server/discover"
	methodListen       = "subscriptions/listen"
	methodSkillsList   = "skills/list"
	methodSkillsGet    = "skills/get"
	methodDirRead      = "resources/directory/read"

	notifInitialized = "notifications/initialized"
	notifCancelled   = "notifications/cancelled"
	notifProgress    = "notifications/progress"
	notifMessage     = "notifications/message"
	notifUpdated     = "notifications/resources/updated"
	notifAcked       = "notifications/subscriptions/acknowledged"
)

// isModernOnlyMethod reports whether method exists only in 2026-07-28, so
// a request for it is always routed to the stateless path.
func isModernOnlyMethod(method string) bool {
	return method == methodDiscover || method == methodListen
}

// isModernMethod reports whether method is a 2026-07-28 client request.
func isModernMethod(method string) bool {
	switch method {
	case methodDiscover, methodListen, methodToolsList, methodToolsCall, methodResList,
		methodResTemplates, methodResRead, methodPromptsList, methodPromptsGet, methodComplete,
		methodTasksGet, methodTasksUpdate, methodTasksCancel, methodSkillsList, methodSkillsGet, methodDirRead:
		return true
	}
	return false
}

// mayRequireInput reports whether method may answer input_required.
func mayRequireInput(method string) bool {
	return method == methodToolsCall || method == methodPromptsGet || method == methodResRead
}
