// The same declarations reach ES module consumers (the "import" side of the exports map).
import { SessionManager, CURRENT_SESSION_VERSION, type SessionEntry } from "pi-session-native";

const manager: SessionManager = SessionManager.inMemory("/work");
const entries: SessionEntry[] = manager.getEntries();
const version: 3 = CURRENT_SESSION_VERSION;

export { entries, version };
