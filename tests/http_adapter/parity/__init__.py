"""Wire parity with the LangGraph Agent Server: transcripts recorded from `langgraph dev` (issue 18)."""
