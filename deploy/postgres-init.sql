-- Run once, when the Postgres volume is first created: the agent's own database (turn records, feedback and
-- `rag-agent chat` checkpoints), apart from the Agent Server's tables in `langgraph`.
CREATE DATABASE rag_agent OWNER langgraph;
